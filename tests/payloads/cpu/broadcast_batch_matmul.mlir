// nn.MultiheadAttention's input projection as exported: a batch matmul whose RHS, a constant
// weight, is broadcast over the batch (IREE rebuilds it as a 40x96x48 matmul).
util.global private @w = #util.byte_pattern<1> : tensor<48x96xf32>
func.func @bcast(%a: tensor<40x1x48xf32>) -> tensor<40x1x96xf32> {
  %w = util.global.load @w : tensor<48x96xf32>
  %eb = tensor.empty() : tensor<40x48x96xf32>
  %b = linalg.broadcast ins(%w : tensor<48x96xf32>) outs(%eb : tensor<40x48x96xf32>) dimensions = [0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x1x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<40x1x96xf32>) -> tensor<40x1x96xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<40x1x48xf32>, tensor<40x48x96xf32>) outs(%f : tensor<40x1x96xf32>) -> tensor<40x1x96xf32>
  return %r : tensor<40x1x96xf32>
}
