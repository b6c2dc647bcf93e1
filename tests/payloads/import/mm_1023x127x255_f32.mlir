// linalg.matmul 1023x127x255 f32 (the first case of MLIR's transform-pack-greedily.mlir).
func.func @matmul_mk_kn_mn(%A : tensor<1023x255xf32>, %B : tensor<255x127xf32>, %C : tensor<1023x127xf32>) -> tensor<1023x127xf32> {
  %0 = linalg.matmul ins(%A, %B : tensor<1023x255xf32>, tensor<255x127xf32>) outs(%C : tensor<1023x127xf32>) -> tensor<1023x127xf32>
  return %0 : tensor<1023x127xf32>
}
