func.func @bmm(%a: tensor<1x128x256xf32>, %b: tensor<1x256x384xf32>) -> tensor<1x128x384xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128x384xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x128x384xf32>) -> tensor<1x128x384xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<1x128x256xf32>, tensor<1x256x384xf32>) outs(%f : tensor<1x128x384xf32>) -> tensor<1x128x384xf32>
  return %r : tensor<1x128x384xf32>
}
