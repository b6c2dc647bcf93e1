// An FFN as iree-import-onnx gives it to IREE, batch 1: 1x64x256 @ 256x1024 (batch_matmul of
// a 3-D activation), bias add, exact GELU (x * 0.5 * (1 + erf(x / sqrt 2)), three generics
// as the importer writes them), then 1x64x1024 @ 1024x256. Weights are arguments.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
func.func @ffn(%x: tensor<1x64x256xf32>, %w1: tensor<1x256x1024xf32>, %b1: tensor<1024xf32>, %w2: tensor<1x1024x256xf32>) -> tensor<1x64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x1024xf32>) -> tensor<1x64x1024xf32>
  %up = linalg.batch_matmul ins(%x, %w1 : tensor<1x64x256xf32>, tensor<1x256x1024xf32>) outs(%f : tensor<1x64x1024xf32>) -> tensor<1x64x1024xf32>
  %biased = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%up, %b1 : tensor<1x64x1024xf32>, tensor<1024xf32>) outs(%e : tensor<1x64x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x64x1024xf32>
  %erf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%biased : tensor<1x64x1024xf32>) outs(%e : tensor<1x64x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %root2 = arith.constant 1.41421354 : f32
    %s = arith.divf %a, %root2 : f32
    %r = math.erf %s : f32
    linalg.yield %r : f32
  } -> tensor<1x64x1024xf32>
  %gelu = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%biased, %erf : tensor<1x64x1024xf32>, tensor<1x64x1024xf32>) outs(%e : tensor<1x64x1024xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %t = arith.addf %r, %one : f32
    %h = arith.mulf %t, %half : f32
    %y = arith.mulf %a, %h : f32
    linalg.yield %y : f32
  } -> tensor<1x64x1024xf32>
  %e2 = tensor.empty() : tensor<1x64x256xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x64x256xf32>) -> tensor<1x64x256xf32>
  %down = linalg.batch_matmul ins(%gelu, %w2 : tensor<1x64x1024xf32>, tensor<1x1024x256xf32>) outs(%f2 : tensor<1x64x256xf32>) -> tensor<1x64x256xf32>
  return %down : tensor<1x64x256xf32>
}
