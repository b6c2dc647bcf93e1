func.func @bmm(%a: tensor<1x128x256xf32>, %b: tensor<1x256x384xf32>) -> tensor<1x128x384xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128x384xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x128x384xf32>) -> tensor<1x128x384xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<1x128x256xf32>, tensor<1x256x384xf32>) outs(%f : tensor<1x128x384xf32>) -> tensor<1x128x384xf32>
  return %r : tensor<1x128x384xf32>
}
func.func @mm(%a: tensor<128x256xf32>, %b: tensor<256x384xf32>) -> tensor<128x384xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x384xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x384xf32>) -> tensor<128x384xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x384xf32>) outs(%f : tensor<128x384xf32>) -> tensor<128x384xf32>
  return %r : tensor<128x384xf32>
}
func.func @bmm3(%a: tensor<3x128x256xf32>, %b: tensor<3x256x384xf32>) -> tensor<3x128x384xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x128x384xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x128x384xf32>) -> tensor<3x128x384xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x128x256xf32>, tensor<3x256x384xf32>) outs(%f : tensor<3x128x384xf32>) -> tensor<3x128x384xf32>
  return %r : tensor<3x128x384xf32>
}
