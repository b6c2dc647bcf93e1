// linalg.matmul 64x48x32 f32 (the @matmul case of MLIR's transform-op-pack.mlir, static sizes).
func.func @matmul(%A: tensor<64x32xf32>, %B: tensor<32x48xf32>, %C: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %0 = linalg.matmul ins(%A, %B: tensor<64x32xf32>, tensor<32x48xf32>) outs(%C: tensor<64x48xf32>) -> tensor<64x48xf32>
  return %0 : tensor<64x48xf32>
}
