#map = affine_map<(d0, d1, d2) -> (d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map5 = affine_map<(d0, d1, d2) -> (d2)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map7 = affine_map<(d0, d1, d2, d3) -> ()>
#map8 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map9 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map10 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map11 = affine_map<(d0, d1) -> (d0, d1)>
#map12 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @attention(%arg0: tensor<1x32x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<64xf32>, %arg3: tensor<64x64xf32>, %arg4: tensor<64xf32>, %arg5: tensor<64x64xf32>, %arg6: tensor<64xf32>, %arg7: tensor<64x64xf32>, %arg8: tensor<64xf32>) -> tensor<1x32x64xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<0.176776692> : tensor<f32>
    %0 = tensor.empty() : tensor<1x32x64xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %2 = tensor.empty() : tensor<1x64x64xf32>
    %3 = tensor.empty() : tensor<1x2x32x32xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<64x64xf32>) outs(%2 : tensor<1x64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x64x64xf32>
    %5 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %4 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%1 : tensor<1x32x64xf32>) attrs =  {tdsl.layout = "heads_hsd4", tdsl.layout_rule = 0 : i64} {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %23 = arith.mulf %in, %in_12 : f32
      %24 = arith.addf %out, %23 : f32
      linalg.yield %24 : f32
    } -> tensor<1x32x64xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map5, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %arg2 : tensor<1x32x64xf32>, tensor<64xf32>) outs(%0 : tensor<1x32x64xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %23 = arith.addf %in, %in_12 : f32
      linalg.yield %23 : f32
    } -> tensor<1x32x64xf32>
    %expanded = tensor.expand_shape %6 [[0], [1], [2, 3]] output_shape [1, 32, 2, 32] : tensor<1x32x64xf32> into tensor<1x32x2x32xf32>
    %transposed = linalg.transpose ins(%expanded : tensor<1x32x2x32xf32>) outs(%3 : tensor<1x2x32x32xf32>) permutation = [0, 2, 1, 3]
    %7 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg3 : tensor<64x64xf32>) outs(%2 : tensor<1x64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x64x64xf32>
    %8 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %7 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%1 : tensor<1x32x64xf32>) attrs =  {tdsl.layout = "heads_hds4", tdsl.layout_rule = 2 : i64} {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %23 = arith.mulf %in, %in_12 : f32
      %24 = arith.addf %out, %23 : f32
      linalg.yield %24 : f32
    } -> tensor<1x32x64xf32>
    %9 = linalg.generic {indexing_maps = [#map1, #map5, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8, %arg4 : tensor<1x32x64xf32>, tensor<64xf32>) outs(%0 : tensor<1x32x64xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %23 = arith.addf %in, %in_12 : f32
      linalg.yield %23 : f32
    } -> tensor<1x32x64xf32>
    %expanded_1 = tensor.expand_shape %9 [[0], [1], [2, 3]] output_shape [1, 32, 2, 32] : tensor<1x32x64xf32> into tensor<1x32x2x32xf32>
    %transposed_2 = linalg.transpose ins(%expanded_1 : tensor<1x32x2x32xf32>) outs(%3 : tensor<1x2x32x32xf32>) permutation = [0, 2, 3, 1]
    %10 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg5 : tensor<64x64xf32>) outs(%2 : tensor<1x64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x64x64xf32>
    %11 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %10 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%1 : tensor<1x32x64xf32>) attrs =  {tdsl.layout = "heads_hsd4", tdsl.layout_rule = 0 : i64} {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %23 = arith.mulf %in, %in_12 : f32
      %24 = arith.addf %out, %23 : f32
      linalg.yield %24 : f32
    } -> tensor<1x32x64xf32>
    %12 = linalg.generic {indexing_maps = [#map1, #map5, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11, %arg6 : tensor<1x32x64xf32>, tensor<64xf32>) outs(%0 : tensor<1x32x64xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %23 = arith.addf %in, %in_12 : f32
      linalg.yield %23 : f32
    } -> tensor<1x32x64xf32>
    %expanded_3 = tensor.expand_shape %12 [[0], [1], [2, 3]] output_shape [1, 32, 2, 32] : tensor<1x32x64xf32> into tensor<1x32x2x32xf32>
    %transposed_4 = linalg.transpose ins(%expanded_3 : tensor<1x32x2x32xf32>) outs(%3 : tensor<1x2x32x32xf32>) permutation = [0, 2, 1, 3]
    %collapsed = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x32x32xf32> into tensor<2x32x32xf32>
    %collapsed_5 = tensor.collapse_shape %transposed_2 [[0, 1], [2], [3]] : tensor<1x2x32x32xf32> into tensor<2x32x32xf32>
    %13 = tensor.empty() : tensor<2x32x32xf32>
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
    %15 = linalg.batch_matmul ins(%collapsed, %collapsed_5 : tensor<2x32x32xf32>, tensor<2x32x32xf32>) outs(%14 : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
    %expanded_6 = tensor.expand_shape %15 [[0, 1], [2], [3]] output_shape [1, 2, 32, 32] : tensor<2x32x32xf32> into tensor<1x2x32x32xf32>
    %16 = linalg.generic {indexing_maps = [#map6, #map7, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6, %cst_0 : tensor<1x2x32x32xf32>, tensor<f32>) outs(%3 : tensor<1x2x32x32xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %23 = arith.mulf %in, %in_12 : f32
      linalg.yield %23 : f32
    } -> tensor<1x2x32x32xf32>
    %17 = linalg.softmax dimension(3) ins(%16 : tensor<1x2x32x32xf32>) outs(%3 : tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32>
    %collapsed_7 = tensor.collapse_shape %17 [[0, 1], [2], [3]] : tensor<1x2x32x32xf32> into tensor<2x32x32xf32>
    %collapsed_8 = tensor.collapse_shape %transposed_4 [[0, 1], [2], [3]] : tensor<1x2x32x32xf32> into tensor<2x32x32xf32>
    %18 = linalg.batch_matmul ins(%collapsed_7, %collapsed_8 : tensor<2x32x32xf32>, tensor<2x32x32xf32>) outs(%14 : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
    %expanded_9 = tensor.expand_shape %18 [[0, 1], [2], [3]] output_shape [1, 2, 32, 32] : tensor<2x32x32xf32> into tensor<1x2x32x32xf32>
    %19 = tensor.empty() : tensor<1x32x2x32xf32>
    %transposed_10 = linalg.transpose ins(%expanded_9 : tensor<1x2x32x32xf32>) outs(%19 : tensor<1x32x2x32xf32>) permutation = [0, 2, 1, 3]
    %collapsed_11 = tensor.collapse_shape %transposed_10 [[0], [1], [2, 3]] : tensor<1x32x2x32xf32> into tensor<1x32x64xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg7 : tensor<64x64xf32>) outs(%2 : tensor<1x64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x64x64xf32>
    %21 = linalg.batch_matmul ins(%collapsed_11, %20 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%1 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %22 = linalg.generic {indexing_maps = [#map1, #map5, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21, %arg8 : tensor<1x32x64xf32>, tensor<64xf32>) outs(%0 : tensor<1x32x64xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %23 = arith.addf %in, %in_12 : f32
      linalg.yield %23 : f32
    } -> tensor<1x32x64xf32>
    return %22 : tensor<1x32x64xf32>
  }
  func.func @proj_2d(%arg0: tensor<32x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<64xf32>) -> tensor<2x32x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<32x64xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x64xf32>) -> tensor<32x64xf32>
    %2 = linalg.generic {indexing_maps = [#map8, #map9, #map10], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<32x64xf32>, tensor<64x64xf32>) outs(%1 : tensor<32x64xf32>) attrs =  {tdsl.layout = "heads_hsd3", tdsl.layout_rule = 1 : i64} {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %5 = arith.mulf %in, %in_0 : f32
      %6 = arith.addf %out, %5 : f32
      linalg.yield %6 : f32
    } -> tensor<32x64xf32>
    %3 = linalg.generic {indexing_maps = [#map11, #map12, #map11], iterator_types = ["parallel", "parallel"]} ins(%2, %arg2 : tensor<32x64xf32>, tensor<64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %5 = arith.addf %in, %in_0 : f32
      linalg.yield %5 : f32
    } -> tensor<32x64xf32>
    %expanded = tensor.expand_shape %3 [[0], [1, 2]] output_shape [32, 2, 32] : tensor<32x64xf32> into tensor<32x2x32xf32>
    %4 = tensor.empty() : tensor<2x32x32xf32>
    %transposed = linalg.transpose ins(%expanded : tensor<32x2x32xf32>) outs(%4 : tensor<2x32x32xf32>) permutation = [1, 0, 2]
    return %transposed : tensor<2x32x32xf32>
  }
}
