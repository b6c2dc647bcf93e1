#map = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)>
module {
  func.func @matmul(%arg0: tensor<256x512xf32>, %arg1: tensor<512x384xf32>) -> tensor<256x384xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<256x384xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<256x384xf32>) -> tensor<256x384xf32>
    %2 = tensor.empty() : tensor<32x512x8x1xf32>
    %pack = linalg.pack %arg0 inner_dims_pos = [0, 1] inner_tiles = [8, 1] into %2 : tensor<256x512xf32> -> tensor<32x512x8x1xf32>
    %3 = tensor.empty() : tensor<512x12x32x1xf32>
    %4 = tensor.empty() : tensor<12x512x32x1xf32>
    %pack_0 = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [32, 1] into %4 : tensor<512x384xf32> -> tensor<12x512x32x1xf32>
    %5 = tensor.empty() : tensor<32x12x8x32xf32>
    %pack_1 = linalg.pack %1 inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %5 : tensor<256x384xf32> -> tensor<32x12x8x32xf32>
    %6 = linalg.mmt4d {indexing_maps = [#map, #map1, #map2], tdsl.layout = "mmt4d_8x32x1", tdsl.layout_rule = 0 : i64} ins(%pack, %pack_0 : tensor<32x512x8x1xf32>, tensor<12x512x32x1xf32>) outs(%pack_1 : tensor<32x12x8x32xf32>) -> tensor<32x12x8x32xf32>
    %unpack = linalg.unpack %6 inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %1 : tensor<32x12x8x32xf32> -> tensor<256x384xf32>
    return %unpack : tensor<256x384xf32>
  }
}
