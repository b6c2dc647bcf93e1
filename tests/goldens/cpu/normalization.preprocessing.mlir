#map = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d1, d4, d5)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)>
#map3 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
#map4 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d3, d4, d6)>
#map5 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2, d5, d6)>
#map6 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d4, d5)>
#map7 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d4, d0 + d2, d1 + d3, d6, d7, d9)>
#map8 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d2, d3, d6, d5, d8, d9)>
#map9 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d4, d0, d1, d5, d7, d8)>
module {
  func.func @matmul(%arg0: tensor<40x64xf32>, %arg1: tensor<64x48xf32>) -> tensor<40x48xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x48xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<40x48xf32>) -> tensor<40x48xf32>
    %2 = tensor.empty() : tensor<5x16x8x4xf32>
    %pack = linalg.pack %arg0 inner_dims_pos = [0, 1] inner_tiles = [8, 4] into %2 : tensor<40x64xf32> -> tensor<5x16x8x4xf32>
    %3 = tensor.empty() : tensor<16x3x16x4xf32>
    %pack_0 = linalg.pack %arg1 inner_dims_pos = [1, 0] inner_tiles = [16, 4] into %3 : tensor<64x48xf32> -> tensor<16x3x16x4xf32>
    %4 = tensor.empty() : tensor<5x3x8x16xf32>
    %pack_1 = linalg.pack %1 inner_dims_pos = [0, 1] inner_tiles = [8, 16] into %4 : tensor<40x48xf32> -> tensor<5x3x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]} ins(%pack, %pack_0 : tensor<5x16x8x4xf32>, tensor<16x3x16x4xf32>) outs(%pack_1 : tensor<5x3x8x16xf32>) attrs =  {tdsl.layout = "packed", tdsl.layout_rule = 0 : i64} {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %6 = arith.mulf %in, %in_2 : f32
      %7 = arith.addf %out, %6 : f32
      linalg.yield %7 : f32
    } -> tensor<5x3x8x16xf32>
    %unpack = linalg.unpack %5 inner_dims_pos = [0, 1] inner_tiles = [8, 16] into %1 : tensor<5x3x8x16xf32> -> tensor<40x48xf32>
    return %unpack : tensor<40x48xf32>
  }
  func.func @matmul_transposed_b(%arg0: tensor<40x64xf32>, %arg1: tensor<48x64xf32>) -> tensor<40x48xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x48xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<40x48xf32>) -> tensor<40x48xf32>
    %2 = tensor.empty() : tensor<5x16x8x4xf32>
    %pack = linalg.pack %arg0 inner_dims_pos = [0, 1] inner_tiles = [8, 4] into %2 : tensor<40x64xf32> -> tensor<5x16x8x4xf32>
    %3 = tensor.empty() : tensor<3x16x16x4xf32>
    %pack_0 = linalg.pack %arg1 inner_dims_pos = [0, 1] inner_tiles = [16, 4] into %3 : tensor<48x64xf32> -> tensor<3x16x16x4xf32>
    %4 = tensor.empty() : tensor<5x3x8x16xf32>
    %pack_1 = linalg.pack %1 inner_dims_pos = [0, 1] inner_tiles = [8, 16] into %4 : tensor<40x48xf32> -> tensor<5x3x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map3, #map2], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]} ins(%pack, %pack_0 : tensor<5x16x8x4xf32>, tensor<3x16x16x4xf32>) outs(%pack_1 : tensor<5x3x8x16xf32>) attrs =  {tdsl.layout = "packed", tdsl.layout_rule = 0 : i64} {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %6 = arith.mulf %in, %in_2 : f32
      %7 = arith.addf %out, %6 : f32
      linalg.yield %7 : f32
    } -> tensor<5x3x8x16xf32>
    %unpack = linalg.unpack %5 inner_dims_pos = [0, 1] inner_tiles = [8, 16] into %1 : tensor<5x3x8x16xf32> -> tensor<40x48xf32>
    return %unpack : tensor<40x48xf32>
  }
  func.func @batch_matmul(%arg0: tensor<2x40x64xf32>, %arg1: tensor<2x64x48xf32>) -> tensor<2x40x48xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x40x48xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x40x48xf32>) -> tensor<2x40x48xf32>
    %2 = tensor.empty() : tensor<2x5x16x8x4xf32>
    %pack = linalg.pack %arg0 inner_dims_pos = [1, 2] inner_tiles = [8, 4] into %2 : tensor<2x40x64xf32> -> tensor<2x5x16x8x4xf32>
    %3 = tensor.empty() : tensor<2x16x3x16x4xf32>
    %pack_0 = linalg.pack %arg1 inner_dims_pos = [2, 1] inner_tiles = [16, 4] into %3 : tensor<2x64x48xf32> -> tensor<2x16x3x16x4xf32>
    %4 = tensor.empty() : tensor<2x5x3x8x16xf32>
    %pack_1 = linalg.pack %1 inner_dims_pos = [1, 2] inner_tiles = [8, 16] into %4 : tensor<2x40x48xf32> -> tensor<2x5x3x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]} ins(%pack, %pack_0 : tensor<2x5x16x8x4xf32>, tensor<2x16x3x16x4xf32>) outs(%pack_1 : tensor<2x5x3x8x16xf32>) attrs =  {tdsl.layout = "packed", tdsl.layout_rule = 0 : i64} {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %6 = arith.mulf %in, %in_2 : f32
      %7 = arith.addf %out, %6 : f32
      linalg.yield %7 : f32
    } -> tensor<2x5x3x8x16xf32>
    %unpack = linalg.unpack %5 inner_dims_pos = [1, 2] inner_tiles = [8, 16] into %1 : tensor<2x5x3x8x16xf32> -> tensor<2x40x48xf32>
    return %unpack : tensor<2x40x48xf32>
  }
  func.func @generic_knm(%arg0: tensor<40x64xf32>, %arg1: tensor<64x48xf32>) -> tensor<40x48xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x48xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<40x48xf32>) -> tensor<40x48xf32>
    %2 = tensor.empty() : tensor<5x16x8x4xf32>
    %pack = linalg.pack %arg0 inner_dims_pos = [0, 1] inner_tiles = [8, 4] into %2 : tensor<40x64xf32> -> tensor<5x16x8x4xf32>
    %3 = tensor.empty() : tensor<16x3x16x4xf32>
    %pack_0 = linalg.pack %arg1 inner_dims_pos = [1, 0] inner_tiles = [16, 4] into %3 : tensor<64x48xf32> -> tensor<16x3x16x4xf32>
    %4 = tensor.empty() : tensor<5x3x8x16xf32>
    %pack_1 = linalg.pack %1 inner_dims_pos = [0, 1] inner_tiles = [8, 16] into %4 : tensor<40x48xf32> -> tensor<5x3x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]} ins(%pack, %pack_0 : tensor<5x16x8x4xf32>, tensor<16x3x16x4xf32>) outs(%pack_1 : tensor<5x3x8x16xf32>) attrs =  {tdsl.layout = "packed", tdsl.layout_rule = 0 : i64} {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %6 = arith.mulf %in, %in_2 : f32
      %7 = arith.addf %out, %6 : f32
      linalg.yield %7 : f32
    } -> tensor<5x3x8x16xf32>
    %unpack = linalg.unpack %5 inner_dims_pos = [0, 1] inner_tiles = [8, 16] into %1 : tensor<5x3x8x16xf32> -> tensor<40x48xf32>
    return %unpack : tensor<40x48xf32>
  }
  func.func @conv(%arg0: tensor<40x3x3x64xf32>, %arg1: tensor<3x3x64x48xf32>) -> tensor<40x1x1x48xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x1x1x48xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<40x1x1x48xf32>) -> tensor<40x1x1x48xf32>
    %2 = tensor.empty() : tensor<5x3x3x16x8x4xf32>
    %pack = linalg.pack %arg0 inner_dims_pos = [0, 3] inner_tiles = [8, 4] into %2 : tensor<40x3x3x64xf32> -> tensor<5x3x3x16x8x4xf32>
    %3 = tensor.empty() : tensor<3x3x16x3x16x4xf32>
    %pack_0 = linalg.pack %arg1 inner_dims_pos = [3, 2] inner_tiles = [16, 4] into %3 : tensor<3x3x64x48xf32> -> tensor<3x3x16x3x16x4xf32>
    %4 = tensor.empty() : tensor<5x1x1x3x8x16xf32>
    %pack_1 = linalg.pack %1 inner_dims_pos = [0, 3] inner_tiles = [8, 16] into %4 : tensor<40x1x1x48xf32> -> tensor<5x1x1x3x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map7, #map8, #map9], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]} ins(%pack, %pack_0 : tensor<5x3x3x16x8x4xf32>, tensor<3x3x16x3x16x4xf32>) outs(%pack_1 : tensor<5x1x1x3x8x16xf32>) attrs =  {tdsl.layout = "packed_conv", tdsl.layout_rule = 1 : i64} {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %6 = arith.mulf %in, %in_2 : f32
      %7 = arith.addf %out, %6 : f32
      linalg.yield %7 : f32
    } -> tensor<5x1x1x3x8x16xf32>
    %unpack = linalg.unpack %5 inner_dims_pos = [0, 3] inner_tiles = [8, 16] into %1 : tensor<5x1x1x3x8x16xf32> -> tensor<40x1x1x48xf32>
    return %unpack : tensor<40x1x1x48xf32>
  }
}
