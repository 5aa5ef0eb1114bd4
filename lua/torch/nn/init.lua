--[[
  torch.nn — neural-network building blocks with PyTorch's names and behaviour:
  nn.Module (lua/torch/nn/module.lua), nn.Parameter, layers, containers, activations,
  nn.functional and nn.init. Each family lives in its own file; this one only indexes them.

      local nn = require "torch.nn"          -- also torch.nn
      local net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
      print(net); print(net:state_dict()["0.weight"]:size())

  A family loads at the first read of one of its names (nn.Linear loads torch.nn.linear), and
  nn.functional, nn.init, nn.utils and nn.parallel at their first read: a script keeps only the
  families it uses in its Lua heap, which every collector cycle marks (torch._lazy_namespace;
  docs/PERFORMANCE.md, optimisation 33). `families` below is the index, one entry per file with
  the names it defines; spec/torch/lazy_namespace_spec.lua checks it against the files. So
  `pairs(nn)` walks the names read or loaded so far; the REPL's completion lists them all.
]]
local module = require "torch.nn.module"
local lazy = require "torch._lazy_namespace"

local nn = {
  Module = module.Module,
  Parameter = module.Parameter,
  is_parameter = module.is_parameter,
}

local families = {
  { "torch.nn.linear", { "Identity", "Linear" } },
  { "torch.nn.containers", { "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential" } },
  { "torch.nn.activations", { "CELU", "ELU", "Flatten", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish",
    "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU", "SiLU",
    "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink",
    "Threshold" } },
  { "torch.nn.loss", { "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss",
    "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss" } },
  { "torch.nn.conv", { "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "is_transposed" } },
  { "torch.nn.normalization", { "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "LayerNorm" } },
  { "torch.nn.normalization_extra", { "CrossMapLRN2d", "LocalResponseNorm", "RMSNorm" } },
  { "torch.nn.dropout", { "AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout" } },
  { "torch.nn.sparse", { "Embedding", "EmbeddingBag" } },
  { "torch.nn.pooling", { "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d",
    "MaxPool2d", "MaxPool3d" } },
  { "torch.nn.pooling_adaptive", { "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d" } },
  { "torch.nn.pooling_unpool", { "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d" } },
  { "torch.nn.bilinear", { "Bilinear" } },
  { "torch.nn.attention", { "MultiheadAttention" } },
  { "torch.nn.rnn", { "GRU", "LSTM", "RNN", "RNNBase" } },
  { "torch.nn.rnn_cell", { "GRUCell", "LSTMCell", "RNNCell", "RNNCellBase" } },
  { "torch.nn.lazy", { "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear", "Uninitialized" } },
  { "torch.nn.adaptive", { "AdaptiveLogSoftmaxWithLoss" } },
  { "torch.nn.transformer", { "TransformerEncoder", "TransformerEncoderLayer" } },
  { "torch.nn.transformer_decoder", { "Transformer", "TransformerDecoder", "TransformerDecoderLayer" } },
  { "torch.nn.padding", { "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d" } },
  { "torch.nn.shape", { "Fold", "Unflatten", "Unfold" } },
  { "torch.nn.vision", { "ChannelShuffle", "PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d",
    "UpsamplingNearest2d" } },
  { "torch.nn.distance", { "CosineSimilarity", "PairwiseDistance" } },
  -- NLLLoss2d, Container: PyTorch's deprecated names, with its warnings
  { "torch.nn.deprecated", { "Container", "NLLLoss2d" } },
}

return lazy.install(nn, {
  name = "torch.nn",
  parts = families,
  fields = {
    functional = "torch.nn.functional",
    init = "torch.nn.initializers",
    utils = "torch.nn.utils",        -- clip_grad_norm_, clip_grad_value_, grad_flow
    parallel = "torch.nn.parallel",  -- DistributedDataParallel (torch.distributed)
  },
})
