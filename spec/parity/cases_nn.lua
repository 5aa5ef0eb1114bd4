--[[
  spec/parity/cases_nn.lua — parity cases for nn.functional-level ATen ops: convolutions
  (1d/2d/3d, transposed, groups, dilation, string padding), pooling (max/avg/adaptive/
  fractional, with indices), normalization (batch/layer/group/instance, native_* forms),
  upsampling (nearest, linear, bilinear, bicubic, trilinear), padding, embedding, pixel
  shuffles, linear/bilinear, im2col/col2im, grid sampling, one_hot.

  PyTorch's Python-only wrappers (F.interpolate, F.pad, F.fold, ...) are not ATen ops: the cases
  call the ATen ops under them (upsample_bilinear2d, constant_pad_nd, col2im, ...), through
  torch.X or torch._nn.X in ltorch and torch.X / torch._C._nn.X in PyTorch.
  Tolerance: F32 (rtol 1e-5, atol 1e-6) — convolution and normalization gradients sum many
  terms; bitwise for max pooling, padding, shuffles, nearest upsampling and embedding lookups.
  Format: spec/parity/desc.lua.  Run: build/ltorch /usr/bin/busted spec/parity
]]
local torch = require "torch"
local d = require "spec.parity.desc"
local T, V, N = d.T, d.V, d.N
local F32 = d.F32
local add, cases = d.group({ tol = F32 })
local function exact(op, args, opts)
  opts = opts or {}
  opts.tol = false
  add(op, args, opts)
end

-- Convolutions: input (N, C, L/H,W/D,H,W), weight (out, in/groups, k...).
add("conv1d", { T({ 2, 3, 8 }), T({ 4, 3, 3 }), T({ 4 }) })
add("conv1d", { T({ 2, 4, 9 }), T({ 4, 2, 3 }), N, 2, 1, 1, 2 })
add("conv1d", { T({ 1, 2, 7 }), T({ 3, 2, 3 }), T({ 3 }), 1, "same", 2 })
add("F.conv1d", { T({ 2, 8, 3 }), T({ 2, 3, 2 }) }, { name = "F.conv1d(transposed input)",
  fn = function(x, w) return torch.nn.functional.conv1d(x:transpose(1, 2), w) end,
  py = "lambda x, w: F.conv1d(x.transpose(1, 2), w)" })
add("conv2d", { T({ 2, 3, 6, 6 }), T({ 4, 3, 3, 3 }), T({ 4 }) })
add("conv2d", { T({ 1, 2, 7, 6 }), T({ 2, 1, 3, 2 }), T({ 2 }), { 2, 1 }, { 1, 0 }, 1, 2 })
add("conv2d", { T({ 1, 2, 6, 6 }), T({ 3, 2, 3, 3 }), N, 1, "valid", 2 })
add("F.conv2d", { T({ 1, 2, 5, 5 }), T({ 2, 2, 3, 3 }), T({ 2 }), 1, 1 })
add("conv3d", { T({ 1, 2, 4, 4, 4 }), T({ 3, 2, 2, 2, 2 }), T({ 3 }) })
add("conv_transpose1d", { T({ 2, 3, 5 }), T({ 3, 2, 3 }), T({ 2 }), 2, 1, 1 })
add("conv_transpose2d", { T({ 1, 2, 4, 4 }), T({ 2, 3, 3, 3 }), T({ 3 }), 2, 1 })
add("conv_transpose2d", { T({ 1, 4, 3, 3 }), T({ 4, 1, 2, 2 }), N, 1, 0, 0, 2 })
add("conv_transpose3d", { T({ 1, 2, 3, 3, 3 }), T({ 2, 2, 2, 2, 2 }) })
add("convolution", { T({ 1, 2, 5, 5 }), T({ 3, 2, 3, 3 }), T({ 3 }), { 1, 1 }, { 1, 1 }, { 1, 1 }, false, { 0, 0 }, 1 })

-- Pooling.
exact("max_pool1d", { T({ 2, 3, 8 }), 2 })
exact("max_pool1d", { T({ 2, 3, 9 }), 3, 2, 1, 1, true })
exact("max_pool2d", { T({ 2, 3, 6, 6 }), { 2, 2 } })
exact("max_pool2d", { T({ 1, 2, 7, 7 }), 3, 2, 1, 2 })
exact("max_pool2d", { T({ 1, 2, 5, 5 }, "t"), 2, { stride = 1 } })
exact("max_pool3d", { T({ 1, 2, 4, 4, 4 }), 2 })
exact("nn.max_pool2d_with_indices", { T({ 1, 2, 6, 6 }), 3, 2, 1 })
exact("max_pool1d_with_indices", { T({ 2, 3, 8 }), 2 })
add("avg_pool1d", { T({ 2, 3, 8 }), 3, 2, 1 })
add("nn.avg_pool2d", { T({ 2, 3, 6, 6 }), 2 })
add("nn.avg_pool2d", { T({ 1, 2, 7, 7 }), 3, 2, 1, true, false })
add("nn.avg_pool2d", { T({ 1, 2, 6, 6 }), 2, 2, 0, false, true, 3 })
add("nn.avg_pool3d", { T({ 1, 2, 4, 4, 4 }), 2 })
add("adaptive_avg_pool1d", { T({ 2, 3, 7 }), 3 })
add("nn.adaptive_avg_pool2d", { T({ 2, 3, 7, 5 }), { 3, 2 } })
add("nn.adaptive_avg_pool3d", { T({ 1, 2, 4, 5, 3 }), 2 })
exact("adaptive_max_pool1d", { T({ 2, 3, 7 }), 3 })
exact("nn.adaptive_max_pool2d", { T({ 2, 3, 7, 5 }), { 3, 2 } })
exact("nn.fractional_max_pool2d", { T({ 1, 2, 7, 7 }), { 2, 2 }, { 3, 3 }, T({ 1, 2, 2 }, "rand nograd") })
exact("max_unpool2d", { T({ 1, 2, 4, 4 }) }, { name = "max_unpool2d(max_pool2d_with_indices(x))",
  fn = function(x) local v, i = torch._nn.max_pool2d_with_indices(x, 2); return torch._nn.max_unpool2d(v, i, { 4, 4 }) end,
  py = "lambda x: torch._C._nn.max_unpool2d(*torch._C._nn.max_pool2d_with_indices(x, 2), [4, 4])" })

-- Normalization: batch norm in training (batch statistics) and eval (running statistics).
add("batch_norm", { T({ 4, 3, 5 }), T({ 3 }, "pos"), T({ 3 }), N, N, true, 0.1, 1e-5, false })
add("batch_norm", { T({ 4, 3 }), T({ 3 }), T({ 3 }), T({ 3 }, "nograd"), T({ 3 }, "pos nograd"), false, 0.1, 1e-5, false })
add("batch_norm", { T({ 2, 3, 4, 4 }), N, N, T({ 3 }, "nograd"), T({ 3 }, "pos nograd"), true, 0.1, 1e-3, false })
add("native_batch_norm", { T({ 4, 3, 5 }), T({ 3 }), T({ 3 }), N, N, true, 0.1, 1e-5 })
add("layer_norm", { T({ 2, 3, 4 }), { 4 }, T({ 4 }), T({ 4 }) })
add("layer_norm", { T({ 2, 3, 4 }, "t"), { 3, 4 } })
add("native_layer_norm", { T({ 2, 5 }), { 5 }, T({ 5 }), T({ 5 }), 1e-5 })
add("group_norm", { T({ 2, 4, 5 }), 2, T({ 4 }), T({ 4 }) })
add("group_norm", { T({ 2, 6, 3, 3 }), 3 })
add("native_group_norm", { T({ 2, 4, 5 }), T({ 4 }), T({ 4 }), 2, 4, 5, 2, 1e-5 })
add("instance_norm", { T({ 2, 3, 6 }), T({ 3 }), T({ 3 }), N, N, true, 0.1, 1e-5, false })

-- Upsampling (what F.interpolate calls).
exact("nn.upsample_nearest1d", { T({ 1, 2, 4 }), { 8 } })
exact("nn.upsample_nearest2d", { T({ 1, 2, 3, 3 }), { 6, 5 } })
exact("nn.upsample_nearest3d", { T({ 1, 1, 2, 2, 2 }), { 4, 3, 4 } })
exact("nn._upsample_nearest_exact1d", { T({ 1, 2, 4 }), { 6 } })
exact("nn._upsample_nearest_exact2d", { T({ 1, 2, 3, 3 }), { 5, 4 } })
add("nn.upsample_linear1d", { T({ 1, 2, 4 }), { 7 }, false })
add("nn.upsample_linear1d", { T({ 1, 2, 4 }), { 7 }, true })
add("nn.upsample_bilinear2d", { T({ 1, 2, 3, 3 }), { 5, 6 }, false })
add("upsample_bilinear2d", { T({ 2, 1, 3, 4 }), { 6, 8 }, true })
add("nn.upsample_bilinear2d", { T({ 1, 2, 3, 3 }), N, false, { 2.0, 1.5 } })
add("nn.upsample_bicubic2d", { T({ 1, 2, 3, 3 }), { 5, 5 }, false })
add("nn.upsample_trilinear3d", { T({ 1, 1, 2, 3, 2 }), { 4, 4, 3 }, false })
add("nn._upsample_bilinear2d_aa", { T({ 1, 2, 6, 6 }), { 3, 4 }, false })

-- Padding (what F.pad calls).
exact("constant_pad_nd", { T({ 2, 3 }), { 1, 2 } })
exact("constant_pad_nd", { T({ 2, 3, 4 }), { 1, 0, 2, 1 }, -1.5 })
exact("constant_pad_nd", { T({ 2, 3 }), { -1, 1 } })
exact("nn.reflection_pad1d", { T({ 1, 2, 5 }), { 2, 1 } })
exact("nn.reflection_pad2d", { T({ 1, 2, 4, 4 }), { 1, 1, 2, 0 } })
exact("nn.reflection_pad3d", { T({ 1, 1, 3, 3, 3 }), { 1, 1, 1, 1, 1, 1 } })
exact("nn.replication_pad1d", { T({ 1, 2, 5 }), { 0, 3 } })
exact("nn.replication_pad2d", { T({ 1, 2, 3, 3 }), { 1, 2, 1, 0 } })
exact("nn.replication_pad3d", { T({ 1, 1, 2, 2, 2 }), { 1, 0, 1, 0, 0, 1 } })
exact("nn.pad", { T({ 1, 2, 4 }), { 2, 2 }, "reflect" })
exact("nn.pad", { T({ 2, 3 }), { 1, 1 }, "constant", 0.5 })

-- Embedding, shuffles, linear maps, patches, sampling grids, one_hot.
exact("embedding", { T({ 6, 3 }), T({ 2, 4 }, "idx6") })
exact("embedding", { T({ 6, 3 }), T({ 5 }, "idx6"), 0 })
add("embedding_bag", { T({ 6, 3 }), T({ 7 }, "idx6"), V({ 0, 3 }, "int64") }, { name = "embedding_bag sum/mean/max" ,
  fn = function(w, i, o)
    local r = {}
    for mode = 0, 2 do r[#r + 1] = (torch.embedding_bag(w, i, o, false, mode)) end
    return r
  end,
  py = "lambda w, i, o: [torch.embedding_bag(w, i, o, False, m)[0] for m in range(3)]" })
exact("pixel_shuffle", { T({ 1, 8, 2, 3 }), 2 })
exact("pixel_unshuffle", { T({ 1, 2, 4, 6 }), 2 })
exact("channel_shuffle", { T({ 1, 6, 2, 2 }), 3 }, { grad = false })
exact("native_channel_shuffle", { T({ 1, 6, 2, 2 }), 2 }, { grad = false })
add("nn.linear", { T({ 4, 3 }), T({ 5, 3 }), T({ 5 }) })
add("linear", { T({ 2, 4, 3 }), T({ 5, 3 }) })
add("F.linear", { T({ 4, 3 }, "t"), T({ 2, 3 }), T({ 2 }) })
add("bilinear", { T({ 4, 3 }), T({ 4, 2 }), T({ 5, 3, 2 }), T({ 5 }) })
exact("nn.im2col", { T({ 1, 2, 4, 4 }), { 2, 2 }, { 1, 1 }, { 0, 0 }, { 1, 1 } })
add("nn.col2im", { T({ 1, 8, 9 }), { 4, 4 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 1, 1 } })
add("grid_sampler_2d", { T({ 1, 2, 4, 4 }), T({ 1, 3, 3, 2 }, "unit"), 0, 0, false })
add("grid_sampler_2d", { T({ 1, 2, 4, 4 }), T({ 1, 3, 3, 2 }, "unit"), 1, 1, true })
add("grid_sampler", { T({ 1, 2, 4, 4 }), T({ 1, 3, 3, 2 }, "unit"), 0, 2, false })
add("affine_grid_generator", { T({ 2, 2, 3 }), { 2, 1, 3, 4 }, false })
exact("nn.one_hot", { T({ 5 }, "idx4") })
exact("F.one_hot", { T({ 2, 3 }, "idx3"), 5 })

return cases
