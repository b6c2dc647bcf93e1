func.func @mm(%lhs: tensor<4608x3072xbf16>, %rhs: tensor<21504x3072xbf16>) -> tensor<4608x21504xf32> {
  %cst = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4608x21504xf32>
  %fill = linalg.fill ins(%cst : f32) outs(%empty : tensor<4608x21504xf32>) -> tensor<4608x21504xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%lhs, %rhs : tensor<4608x3072xbf16>, tensor<21504x3072xbf16>) outs(%fill : tensor<4608x21504xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %p = arith.mulf %ea, %eb : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4608x21504xf32>
  return %0 : tensor<4608x21504xf32>
}
