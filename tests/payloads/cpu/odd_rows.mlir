// Row reductions whose row is no multiple of the vector width (197, 100), as IREE's
// odd-size softmax and LayerNorm dispatches: linalg.softmax, and LayerNorm in the
// form torch-mlir decomposes it to (mean, centered values, variance, scale).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @softmax_2x37x197(%x: tensor<2x37x197xf32>) -> tensor<2x37x197xf32> {
  %e = tensor.empty() : tensor<2x37x197xf32>
  %r = linalg.softmax dimension(2) ins(%x : tensor<2x37x197xf32>) outs(%e : tensor<2x37x197xf32>) -> tensor<2x37x197xf32>
  return %r : tensor<2x37x197xf32>
}

func.func @layernorm_37x100(%x: tensor<37x100xf32>, %g: tensor<100xf32>, %b: tensor<100xf32>) -> tensor<37x100xf32> {
  %z = arith.constant 0.0 : f32
  %n = arith.constant 100.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %ev = tensor.empty() : tensor<37xf32>
  %zv = linalg.fill ins(%z : f32) outs(%ev : tensor<37xf32>) -> tensor<37xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<37x100xf32>) outs(%zv : tensor<37xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<37xf32>
  %et = tensor.empty() : tensor<37x100xf32>
  %xc = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<37x100xf32>, tensor<37xf32>) outs(%et : tensor<37x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %mean = arith.divf %m, %n : f32
    %y = arith.subf %a, %mean : f32
    linalg.yield %y : f32
  } -> tensor<37x100xf32>
  %q = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xc : tensor<37x100xf32>) outs(%zv : tensor<37xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %y = arith.addf %sq, %acc : f32
    linalg.yield %y : f32
  } -> tensor<37xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%xc, %q, %g, %b : tensor<37x100xf32>, tensor<37xf32>, tensor<100xf32>, tensor<100xf32>) outs(%et : tensor<37x100xf32>) {
  ^bb0(%a: f32, %vs: f32, %gg: f32, %bb: f32, %o: f32):
    %var = arith.divf %vs, %n : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %y0 = arith.mulf %a, %rs : f32
    %y1 = arith.mulf %y0, %gg : f32
    %y = arith.addf %y1, %bb : f32
    linalg.yield %y : f32
  } -> tensor<37x100xf32>
  return %r : tensor<37x100xf32>
}
