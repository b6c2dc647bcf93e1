// A 256^3 matmul and a 4x8x16 one in one function: the small one is far under 1 % of the time.
func.func @two(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>, %v: tensor<4x8xf32>, %u: tensor<8x16xf32>) -> (tensor<256x256xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %a = linalg.matmul ins(%x, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %b = linalg.matmul ins(%v, %u : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %a, %b : tensor<256x256xf32>, tensor<4x16xf32>
}
