// Two batch-1 batch_matmuls in one function, as an ONNX MLP exports them (3-D activation by
// 2-D weight): 1x64x256 -> 1x64x512 (relu) -> 1x64x256.
func.func @mlp(%x: tensor<1x64x256xf32>, %w1: tensor<1x256x512xf32>, %w2: tensor<1x512x256xf32>) -> tensor<1x64x256xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x64x512xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x64x512xf32>) -> tensor<1x64x512xf32>
  %h = linalg.batch_matmul ins(%x, %w1 : tensor<1x64x256xf32>, tensor<1x256x512xf32>) outs(%f1 : tensor<1x64x512xf32>) -> tensor<1x64x512xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h : tensor<1x64x512xf32>) outs(%e1 : tensor<1x64x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x64x512xf32>
  %e2 = tensor.empty() : tensor<1x64x256xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x64x256xf32>) -> tensor<1x64x256xf32>
  %r = linalg.batch_matmul ins(%relu, %w2 : tensor<1x64x512xf32>, tensor<1x512x256xf32>) outs(%f2 : tensor<1x64x256xf32>) -> tensor<1x64x256xf32>
  return %r : tensor<1x64x256xf32>
}
