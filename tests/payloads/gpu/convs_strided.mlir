// Convolutions as real models hand them to gfx942: unit batch (IREE drops it), strides,
// dilations, NCHW and NHWC, a stride-2 1x1 convolution (a contraction with two m loops at
// codegen), an input-channel count no intrinsic divides (K = 27), an odd output image
// (17 x 17), and a 128x768x768 f16 matmul.
func.func @conv_nchw_s2(%x: tensor<1x32x34x34xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<1x64x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x32x34x34xf32>, tensor<64x32x3x3xf32>) outs(%f : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
  return %r : tensor<1x64x16x16xf32>
}
func.func @conv_nhwc_d2(%x: tensor<1x36x36x48xf16>, %w: tensor<3x3x48x96xf16>) -> tensor<1x32x32x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x32x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x32x96xf32>) -> tensor<1x32x32x96xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x36x36x48xf16>, tensor<3x3x48x96xf16>) outs(%f : tensor<1x32x32x96xf32>) -> tensor<1x32x32x96xf32>
  return %r : tensor<1x32x32x96xf32>
}
func.func @conv_nchw_s2d2(%x: tensor<2x16x37x37xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<2x32x17x17xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x17x17xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x17x17xf32>) -> tensor<2x32x17x17xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<2x16x37x37xf16>, tensor<32x16x3x3xf16>) outs(%f : tensor<2x32x17x17xf32>) -> tensor<2x32x17x17xf32>
  return %r : tensor<2x32x17x17xf32>
}
func.func @conv1x1_s2(%x: tensor<1x64x32x32xf32>, %w: tensor<128x64x1x1xf32>) -> tensor<1x128x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128x16x16xf32>) -> tensor<1x128x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x64x32x32xf32>, tensor<128x64x1x1xf32>) outs(%f : tensor<1x128x16x16xf32>) -> tensor<1x128x16x16xf32>
  return %r : tensor<1x128x16x16xf32>
}
func.func @conv_rgb(%x: tensor<1x3x66x66xf32>, %w: tensor<32x3x3x3xf32>) -> tensor<1x32x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x66x66xf32>, tensor<32x3x3x3xf32>) outs(%f : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  return %r : tensor<1x32x32x32xf32>
}
func.func @mm128(%a: tensor<128x768xf16>, %b: tensor<768x768xf16>) -> tensor<128x768xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x768xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x768xf16>, tensor<768x768xf16>) outs(%f : tensor<128x768xf32>) -> tensor<128x768xf32>
  return %r : tensor<128x768xf32>
}
