// A zero-filled static-shape f32 matmul 64x48x32 (how a frontend's MatMul lowers): the DAG of
// IREE's mlp_plugin preprocessing spec, whose dynamic pattern is cast-compatible with it.
func.func @mlp(%lhs: tensor<64x32xf32>, %rhs: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %cst = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x48xf32>
  %fill = linalg.fill ins(%cst : f32) outs(%empty : tensor<64x48xf32>) -> tensor<64x48xf32>
  %mm = linalg.matmul ins(%lhs, %rhs : tensor<64x32xf32>, tensor<32x48xf32>) outs(%fill : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %mm : tensor<64x48xf32>
}
