// Payload for tests/cases.py CODEGEN_VARIANTS: a matmul (full codegen strategy) and a batch
// matmul (compilation_info selected by its dispatch function name).
func.func @matmul(%a: tensor<256x128xf32>, %b: tensor<128x192xf32>) -> tensor<256x192xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x192xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x192xf32>) -> tensor<256x192xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x192xf32>) outs(%f : tensor<256x192xf32>) -> tensor<256x192xf32>
  return %r : tensor<256x192xf32>
}
func.func @bmm(%a: tensor<2x64x32xf32>, %b: tensor<2x32x48xf32>) -> tensor<2x64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64x48xf32>) -> tensor<2x64x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x64x32xf32>, tensor<2x32x48xf32>) outs(%f : tensor<2x64x48xf32>) -> tensor<2x64x48xf32>
  return %r : tensor<2x64x48xf32>
}
