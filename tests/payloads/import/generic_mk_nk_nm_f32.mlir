// A contraction as linalg.generic, lhs MxK, rhs NxK, result NxM (@matmul_mk_nk_nm of MLIR's
// transform-pack-greedily.mlir).
#mkn_accesses = [
  affine_map<(m, n, k) -> (m, k)>,
  affine_map<(m, n, k) -> (n, k)>,
  affine_map<(m, n, k) -> (n, m)>
]
#mkn_trait = {
  indexing_maps = #mkn_accesses,
  iterator_types = ["parallel", "parallel", "reduction"]
}
func.func @matmul_mk_nk_nm(%A : tensor<1023x255xf32>, %B : tensor<127x255xf32>, %C : tensor<127x1023xf32>) -> tensor<127x1023xf32> {
  %0 = linalg.generic #mkn_trait ins(%A, %B : tensor<1023x255xf32>, tensor<127x255xf32>) outs(%C : tensor<127x1023xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %d = arith.mulf %a, %b : f32
      %e = arith.addf %c, %d : f32
      linalg.yield %e : f32
  } -> tensor<127x1023xf32>
  return %0 : tensor<127x1023xf32>
}
