// A batch of 4 f32 matmuls, 128x256 * 256x192.
func.func @bmm(%a: tensor<4x128x256xf32>, %b: tensor<4x256x192xf32>) -> tensor<4x128x192xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x128x192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x128x192xf32>) -> tensor<4x128x192xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x128x256xf32>, tensor<4x256x192xf32>) outs(%acc : tensor<4x128x192xf32>) -> tensor<4x128x192xf32>
  return %r : tensor<4x128x192xf32>
}
