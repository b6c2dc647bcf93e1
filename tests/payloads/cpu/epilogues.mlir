func.func @mm_bias_relu(%a: tensor<256x512xf32>, %b: tensor<512x384xf32>, %bias: tensor<384xf32>) -> tensor<256x384xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x384xf32>) outs(%f : tensor<256x384xf32>) -> tensor<256x384xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<256x384xf32>, tensor<384xf32>) outs(%e : tensor<256x384xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<256x384xf32>
  return %r : tensor<256x384xf32>
}
func.func @conv_bias_relu(%x: tensor<1x30x30x32xf32>, %w: tensor<3x3x32x40xf32>, %bias: tensor<40xf32>) -> tensor<1x28x28x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x28x28x40xf32>) -> tensor<1x28x28x40xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x30x30x32xf32>, tensor<3x3x32x40xf32>) outs(%f : tensor<1x28x28x40xf32>) -> tensor<1x28x28x40xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<1x28x28x40xf32>, tensor<40xf32>) outs(%e : tensor<1x28x28x40xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x28x28x40xf32>
  return %r : tensor<1x28x28x40xf32>
}
