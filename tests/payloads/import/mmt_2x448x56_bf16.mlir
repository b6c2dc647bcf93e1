func.func @mm(%lhs: tensor<2x56xbf16>, %rhs: tensor<448x56xbf16>) -> tensor<2x448xf32> {
  %cst = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x448xf32>
  %fill = linalg.fill ins(%cst : f32) outs(%empty : tensor<2x448xf32>) -> tensor<2x448xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%lhs, %rhs : tensor<2x56xbf16>, tensor<448x56xbf16>) outs(%fill : tensor<2x448xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %p = arith.mulf %ea, %eb : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x448xf32>
  return %0 : tensor<2x448xf32>
}
