// Batched attention scores with an i8 mask (a where on mask != 0) into a softmax: batch 2
// heads, -inf where the mask is 0. Returns the probabilities.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%q: tensor<2x32x16xf32>, %kt: tensor<2x16x32xf32>, %mask: tensor<2x32x32xi8>) -> tensor<2x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i8
  %e = tensor.empty() : tensor<2x32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x32x16xf32>, tensor<2x16x32xf32>) outs(%f : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  %masked = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x32x32xf32>, tensor<2x32x32xi8>) outs(%e : tensor<2x32x32xf32>) {
  ^bb0(%a: f32, %m: i8, %o: f32):
    %keep = arith.cmpi ne, %m, %c0 : i8
    %y = arith.select %keep, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x32x32xf32>
  %e1 = tensor.empty() : tensor<2x32x32xf32>
  %p = linalg.softmax dimension(2) ins(%masked : tensor<2x32x32xf32>) outs(%e1 : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  return %p : tensor<2x32x32xf32>
}
