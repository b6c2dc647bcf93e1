// A two-layer MLP block: relu(x @ w1 + b1) @ w2 + b2, with x 128x256, w1 256x512, w2 512x128 (f32).
#map_bias = affine_map<(d0, d1) -> (d1)>
#map_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<128x256xf32>, %w1: tensor<256x512xf32>, %b1: tensor<512xf32>,
               %w2: tensor<512x128xf32>, %b2: tensor<128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<128x512xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128x512xf32>) -> tensor<128x512xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<128x256xf32>, tensor<256x512xf32>) outs(%acc1 : tensor<128x512xf32>) -> tensor<128x512xf32>
  %a = linalg.generic {indexing_maps = [#map_id, #map_bias, #map_id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<128x512xf32>, tensor<512xf32>) outs(%e1 : tensor<128x512xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x512xf32>
  %e2 = tensor.empty() : tensor<128x128xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<128x128xf32>) -> tensor<128x128xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<128x512xf32>, tensor<512x128xf32>) outs(%acc2 : tensor<128x128xf32>) -> tensor<128x128xf32>
  %o = linalg.generic {indexing_maps = [#map_id, #map_bias, #map_id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b2 : tensor<128x128xf32>, tensor<128xf32>) outs(%e2 : tensor<128x128xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<128x128xf32>
  return %o : tensor<128x128xf32>
}
