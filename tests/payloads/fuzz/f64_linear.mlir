// An f64 linear layer (ONNX Einsum / MatMul in double): a matmul, a bias add and an exp.
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<32x48xf64>, %w: tensor<48x64xf64>, %b: tensor<64xf64>) -> tensor<32x64xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<32x64xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<32x64xf64>) -> tensor<32x64xf64>
  %mm = linalg.matmul ins(%x, %w : tensor<32x48xf64>, tensor<48x64xf64>) outs(%f : tensor<32x64xf64>) -> tensor<32x64xf64>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<32x64xf64>, tensor<64xf64>) outs(%e : tensor<32x64xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    %t = math.exp %s : f64
    linalg.yield %t : f64
  } -> tensor<32x64xf64>
  return %y : tensor<32x64xf64>
}
