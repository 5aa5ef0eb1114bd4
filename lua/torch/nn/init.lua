--[[
  torch.nn — neural-network building blocks with PyTorch's names and behaviour:
  nn.Module (lua/torch/nn/module.lua), nn.Parameter, layers, containers, activations,
  nn.functional and nn.init. Each family lives in its own file; this one only gathers them.

      local nn = require "torch.nn"          -- also torch.nn
      local net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
      print(net); print(net:state_dict()["0.weight"]:size())

  Layer families are listed in `families` below; a file returns a table of classes.
]]
local module = require "torch.nn.module"

local nn = {
  Module = module.Module,
  Parameter = module.Parameter,
  is_parameter = module.is_parameter,
  functional = require "torch.nn.functional",
  init = require "torch.nn.initializers",
  utils = require "torch.nn.utils",      -- clip_grad_norm_, clip_grad_value_, grad_flow
  parallel = require "torch.nn.parallel",   -- DistributedDataParallel (torch.distributed)
}

local families = {
  "torch.nn.linear",
  "torch.nn.containers",
  "torch.nn.activations",
  "torch.nn.loss",
  "torch.nn.conv",
  "torch.nn.normalization",
  "torch.nn.normalization_extra",   -- RMSNorm, LocalResponseNorm, CrossMapLRN2d
  "torch.nn.dropout",
  "torch.nn.sparse",
  "torch.nn.pooling",
  "torch.nn.pooling_adaptive",   -- AdaptiveAvgPool1d-3d, AdaptiveMaxPool1d-3d
  "torch.nn.pooling_unpool",     -- MaxUnpool1d-3d, FractionalMaxPool2d/3d
  "torch.nn.bilinear",
  "torch.nn.attention",
  "torch.nn.rnn",
  "torch.nn.rnn_cell",   -- RNNCellBase, RNNCell, LSTMCell, GRUCell
  "torch.nn.lazy",   -- LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*
  "torch.nn.adaptive",   -- AdaptiveLogSoftmaxWithLoss
  "torch.nn.transformer",
  "torch.nn.transformer_decoder",   -- TransformerDecoderLayer, TransformerDecoder, Transformer
  "torch.nn.padding",      -- ConstantPad, ZeroPad, ReflectionPad, ReplicationPad, CircularPad (1d/2d/3d)
  "torch.nn.shape",        -- Unflatten, Fold, Unfold
  "torch.nn.vision",       -- PixelShuffle, PixelUnshuffle, ChannelShuffle, Upsample*
  "torch.nn.distance",     -- CosineSimilarity, PairwiseDistance
  "torch.nn.deprecated",   -- NLLLoss2d, Container (PyTorch's deprecated names, with its warnings)
}
for _, name in ipairs(families) do
  for k, v in pairs(require(name)) do
    if nn[k] ~= nil then error("torch.nn: " .. name .. " redefines nn." .. k) end
    nn[k] = v
  end
end
require("torch.nn._forward_keywords").register(nn)   -- m({input = x}) binds PyTorch's forward names

return nn
