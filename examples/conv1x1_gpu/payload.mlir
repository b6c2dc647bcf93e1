// NCHW 1x1 convolution (input 1x64x56x56, filter 128x64x1x1, f16 in, f32 accumulate) followed by
// quantize -> dequantize (per-tensor scale 0.05, i8), a residual add and a relu.
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @conv1x1(%x: tensor<1x64x56x56xf16>, %w: tensor<128x64x1x1xf16>, %res: tensor<1x128x56x56xf32>) -> tensor<1x128x56x56xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.05 : f32
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %e = tensor.empty() : tensor<1x128x56x56xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128x56x56xf32>) -> tensor<1x128x56x56xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x64x56x56xf16>, tensor<128x64x1x1xf16>) outs(%acc : tensor<1x128x56x56xf32>) -> tensor<1x128x56x56xf32>
  %eq = tensor.empty() : tensor<1x128x56x56xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<1x128x56x56xf32>) outs(%eq : tensor<1x128x56x56xi8>) {
  ^bb0(%v: f32, %o: i8):
    %d = arith.divf %v, %scale : f32
    %r = math.roundeven %d : f32
    %c0 = arith.maximumf %r, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %i = arith.fptosi %c1 : f32 to i8
    linalg.yield %i : i8
  } -> tensor<1x128x56x56xi8>
  %out = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q, %res : tensor<1x128x56x56xi8>, tensor<1x128x56x56xf32>) outs(%e : tensor<1x128x56x56xf32>) {
  ^bb0(%v: i8, %r: f32, %o: f32):
    %f = arith.sitofp %v : i8 to f32
    %dq = arith.mulf %f, %scale : f32
    %s = arith.addf %dq, %r : f32
    %relu = arith.maximumf %s, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<1x128x56x56xf32>
  return %out : tensor<1x128x56x56xf32>
}
