// A batch-1 3x3 convolution, as a ResNet stem exports it: IREE drops the unit batch before
// codegen (on gfx942 the dispatch has no batch loop), then a ReLU.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x18x18x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x18x18x16xf32>, tensor<3x3x16x32xf32>) outs(%f : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x16x16x32xf32>) outs(%e : tensor<1x16x16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x16x16x32xf32>
  return %r : tensor<1x16x16x32xf32>
}
