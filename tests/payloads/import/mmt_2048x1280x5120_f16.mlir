func.func @mmt(%lhs: tensor<2048x5120xf16>, %rhs: tensor<1280x5120xf16>) -> tensor<2048x1280xf32> {
  %cst = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2048x1280xf32>
  %fill = linalg.fill ins(%cst : f32) outs(%empty : tensor<2048x1280xf32>) -> tensor<2048x1280xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%lhs, %rhs : tensor<2048x5120xf16>, tensor<1280x5120xf16>) outs(%fill : tensor<2048x1280xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2048x1280xf32>
  return %0 : tensor<2048x1280xf32>
}
