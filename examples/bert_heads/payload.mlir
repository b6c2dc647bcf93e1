func.func @bert_proj(%a: tensor<128x768xf32>, %b: tensor<768x768xf32>, %bias: tensor<768xf32>) -> tensor<12x128x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x768xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<128x768xf32>, tensor<768x768xf32>) outs(%f : tensor<128x768xf32>) -> tensor<128x768xf32>
  %x = tensor.expand_shape %mm [[0], [1, 2]] output_shape [128, 12, 64] : tensor<128x768xf32> into tensor<128x12x64xf32>
  %bx = tensor.expand_shape %bias [[0, 1]] output_shape [12, 64] : tensor<768xf32> into tensor<12x64xf32>
  %e2 = tensor.empty() : tensor<12x128x64xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %bx : tensor<128x12x64xf32>, tensor<12x64xf32>) outs(%e2 : tensor<12x128x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<12x128x64xf32>
  return %t : tensor<12x128x64xf32>
}
