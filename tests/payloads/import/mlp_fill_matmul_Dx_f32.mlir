// The form IREE's samples/custom_dispatch/cpu/mlp_plugin/mlp.mlir feeds its preprocessing spec:
// a zero-filled dynamic-shape f32 matmul (the DAG the spec replaces with a plugin call).
func.func @mlp(%lhs: tensor<?x?xf32>, %rhs: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %m = tensor.dim %lhs, %c0 : tensor<?x?xf32>
  %n = tensor.dim %rhs, %c1 : tensor<?x?xf32>
  %empty = tensor.empty(%m, %n) : tensor<?x?xf32>
  %fill = linalg.fill ins(%cst : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%lhs, %rhs : tensor<?x?xf32>, tensor<?x?xf32>) outs(%fill : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %mm : tensor<?x?xf32>
}
