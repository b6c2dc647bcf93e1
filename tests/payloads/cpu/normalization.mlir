// Five contraction-like ops with the same (m, n, k) = (40, 48, 64) per batch, written five ways.
func.func @matmul(%a: tensor<40x64xf32>, %b: tensor<64x48xf32>) -> tensor<40x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<40x48xf32>) -> tensor<40x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<40x64xf32>, tensor<64x48xf32>) outs(%f : tensor<40x48xf32>) -> tensor<40x48xf32>
  return %r : tensor<40x48xf32>
}
func.func @matmul_transposed_b(%a: tensor<40x64xf32>, %b: tensor<48x64xf32>) -> tensor<40x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<40x48xf32>) -> tensor<40x48xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : tensor<40x64xf32>, tensor<48x64xf32>) outs(%f : tensor<40x48xf32>) -> tensor<40x48xf32>
  return %r : tensor<40x48xf32>
}
func.func @batch_matmul(%a: tensor<2x40x64xf32>, %b: tensor<2x64x48xf32>) -> tensor<2x40x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x40x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x40x48xf32>) -> tensor<2x40x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x40x64xf32>, tensor<2x64x48xf32>) outs(%f : tensor<2x40x48xf32>) -> tensor<2x40x48xf32>
  return %r : tensor<2x40x48xf32>
}
// A generic contraction with the loops in (k, n, m) order.
func.func @generic_knm(%a: tensor<40x64xf32>, %b: tensor<64x48xf32>) -> tensor<40x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<40x48xf32>) -> tensor<40x48xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>],
                       iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : tensor<40x64xf32>, tensor<64x48xf32>) outs(%f : tensor<40x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<40x48xf32>
  return %r : tensor<40x48xf32>
}
// NHWC conv, batch 40 (m), 1x1 output image, 64 input channels (k), 48 filters (n).
func.func @conv(%x: tensor<40x3x3x64xf32>, %w: tensor<3x3x64x48xf32>) -> tensor<40x1x1x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x1x1x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<40x1x1x48xf32>) -> tensor<40x1x1x48xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<40x3x3x64xf32>, tensor<3x3x64x48xf32>) outs(%f : tensor<40x1x1x48xf32>) -> tensor<40x1x1x48xf32>
  return %r : tensor<40x1x1x48xf32>
}
