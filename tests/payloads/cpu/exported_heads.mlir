// Multi-head attention as PyTorch -> ONNX -> iree-import-onnx hands it to IREE (the op order
// of examples/models/bert at the graph level, sizes cut down): every projection is a batch-1
// linalg.batch_matmul of a broadcast weight, a bias add, tensor.expand_shape to heads and a
// named linalg.transpose ([0, 2, 1, 3] for Q and V, [0, 2, 3, 1] for K). P.V is expanded and
// transposed back without a bias add; the output projection is not split. @proj_2d is the
// same head split after a 2-D linalg.matmul (rank-3 transpose [1, 0, 2]).
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias3 = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#bias2 = affine_map<(d0, d1) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar4 = affine_map<(d0, d1, d2, d3) -> ()>
func.func @attention(%x: tensor<1x32x64xf32>, %wq: tensor<64x64xf32>, %bq: tensor<64xf32>, %wk: tensor<64x64xf32>,
                     %bk: tensor<64xf32>, %wv: tensor<64x64xf32>, %bv: tensor<64xf32>, %wo: tensor<64x64xf32>,
                     %bo: tensor<64xf32>) -> tensor<1x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant dense<0.176776695> : tensor<f32>
  %act = tensor.empty() : tensor<1x32x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%act : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
  %w3 = tensor.empty() : tensor<1x64x64xf32>
  %heads = tensor.empty() : tensor<1x2x32x32xf32>
  // Q: [0, 2, 1, 3]
  %wq3 = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wq : tensor<64x64xf32>) outs(%w3 : tensor<1x64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x64x64xf32>
  %q0 = linalg.batch_matmul ins(%x, %wq3 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%acc : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
  %q1 = linalg.generic {indexing_maps = [#id3, #bias3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q0, %bq : tensor<1x32x64xf32>, tensor<64xf32>) outs(%act : tensor<1x32x64xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x32x64xf32>
  %q2 = tensor.expand_shape %q1 [[0], [1], [2, 3]] output_shape [1, 32, 2, 32] : tensor<1x32x64xf32> into tensor<1x32x2x32xf32>
  %q = linalg.transpose ins(%q2 : tensor<1x32x2x32xf32>) outs(%heads : tensor<1x2x32x32xf32>) permutation = [0, 2, 1, 3]
  // K: [0, 2, 3, 1]
  %wk3 = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wk : tensor<64x64xf32>) outs(%w3 : tensor<1x64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x64x64xf32>
  %k0 = linalg.batch_matmul ins(%x, %wk3 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%acc : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
  %k1 = linalg.generic {indexing_maps = [#id3, #bias3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k0, %bk : tensor<1x32x64xf32>, tensor<64xf32>) outs(%act : tensor<1x32x64xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x32x64xf32>
  %k2 = tensor.expand_shape %k1 [[0], [1], [2, 3]] output_shape [1, 32, 2, 32] : tensor<1x32x64xf32> into tensor<1x32x2x32xf32>
  %kt = linalg.transpose ins(%k2 : tensor<1x32x2x32xf32>) outs(%heads : tensor<1x2x32x32xf32>) permutation = [0, 2, 3, 1]
  // V: [0, 2, 1, 3]
  %wv3 = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wv : tensor<64x64xf32>) outs(%w3 : tensor<1x64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x64x64xf32>
  %v0 = linalg.batch_matmul ins(%x, %wv3 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%acc : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
  %v1 = linalg.generic {indexing_maps = [#id3, #bias3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v0, %bv : tensor<1x32x64xf32>, tensor<64xf32>) outs(%act : tensor<1x32x64xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x32x64xf32>
  %v2 = tensor.expand_shape %v1 [[0], [1], [2, 3]] output_shape [1, 32, 2, 32] : tensor<1x32x64xf32> into tensor<1x32x2x32xf32>
  %v = linalg.transpose ins(%v2 : tensor<1x32x2x32xf32>) outs(%heads : tensor<1x2x32x32xf32>) permutation = [0, 2, 1, 3]
  // scores = softmax(Q K^T * scale)
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x32x32xf32> into tensor<2x32x32xf32>
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x32x32xf32> into tensor<2x32x32xf32>
  %sq = tensor.empty() : tensor<2x32x32xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%sq : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  %s0 = linalg.batch_matmul ins(%qc, %kc : tensor<2x32x32xf32>, tensor<2x32x32xf32>) outs(%sacc : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  %s1 = tensor.expand_shape %s0 [[0, 1], [2], [3]] output_shape [1, 2, 32, 32] : tensor<2x32x32xf32> into tensor<1x2x32x32xf32>
  %s2 = linalg.generic {indexing_maps = [#id4, #scalar4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s1, %scale : tensor<1x2x32x32xf32>, tensor<f32>) outs(%heads : tensor<1x2x32x32xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x2x32x32xf32>
  %p = linalg.softmax dimension(3) ins(%s2 : tensor<1x2x32x32xf32>) outs(%heads : tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32>
  // P.V, back to (seq, hidden): expand and transpose without a bias add
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x32x32xf32> into tensor<2x32x32xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x32x32xf32> into tensor<2x32x32xf32>
  %o0 = linalg.batch_matmul ins(%pc, %vc : tensor<2x32x32xf32>, tensor<2x32x32xf32>) outs(%sacc : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  %o1 = tensor.expand_shape %o0 [[0, 1], [2], [3]] output_shape [1, 2, 32, 32] : tensor<2x32x32xf32> into tensor<1x2x32x32xf32>
  %seq = tensor.empty() : tensor<1x32x2x32xf32>
  %o2 = linalg.transpose ins(%o1 : tensor<1x2x32x32xf32>) outs(%seq : tensor<1x32x2x32xf32>) permutation = [0, 2, 1, 3]
  %o3 = tensor.collapse_shape %o2 [[0], [1], [2, 3]] : tensor<1x32x2x32xf32> into tensor<1x32x64xf32>
  // output projection (no head split)
  %wo3 = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wo : tensor<64x64xf32>) outs(%w3 : tensor<1x64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x64x64xf32>
  %y0 = linalg.batch_matmul ins(%o3, %wo3 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%acc : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
  %y = linalg.generic {indexing_maps = [#id3, #bias3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y0, %bo : tensor<1x32x64xf32>, tensor<64xf32>) outs(%act : tensor<1x32x64xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x32x64xf32>
  return %y : tensor<1x32x64xf32>
}

func.func @proj_2d(%x: tensor<32x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<2x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x64xf32>) outs(%f : tensor<32x64xf32>) -> tensor<32x64xf32>
  %biased = linalg.generic {indexing_maps = [#id2, #bias2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<32x64xf32>, tensor<64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<32x64xf32>
  %x3 = tensor.expand_shape %biased [[0], [1, 2]] output_shape [32, 2, 32] : tensor<32x64xf32> into tensor<32x2x32xf32>
  %h = tensor.empty() : tensor<2x32x32xf32>
  %t = linalg.transpose ins(%x3 : tensor<32x2x32xf32>) outs(%h : tensor<2x32x32xf32>) permutation = [1, 0, 2]
  return %t : tensor<2x32x32xf32>
}
