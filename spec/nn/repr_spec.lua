--[[
  spec/nn/repr_spec.lua — module reprs (each layer's extra_repr) against PyTorch's for a broad set of
  layers: tostring(m) must equal repr(m) character for character.

  Numbers print as Python prints them. Python prints what was given (3 for an int, 3.0 for a
  float); Lua cannot tell 3 from 3.0, so ltorch decides by the constructor's PyTorch signature: a
  parameter typed int prints 3, one typed float prints 3.0, and a value equal to PyTorch's default
  prints as that default is written (CrossMapLRN2d's k=1). So the cases below write a float
  parameter's value as a float literal (LPPool1d(2.0, 3)), and the Lua call is the same call with
  every integral float literal written as a plain Lua number (nn.LPPool1d(2, 3)): the repr must still
  say 2.0. PyTorch translates each case into the Lua call (ast: positional arguments, then a
  keyword table; tuples and lists as Lua arrays) and gives its repr.

  Run:  build/ltorch /usr/bin/busted spec/nn/repr_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local cjson = require "cjson"

local CASES = {
  "Linear(3, 4)",
  "Bilinear(3, 4, 5)",
  "Conv1d(3, 4, 3)",
  "Conv2d(3, 4, 3, stride=2, padding=1, dilation=2, groups=1, bias=False)",
  "Conv3d(2, 4, (1, 2, 3), padding='same')",
  "ConvTranspose2d(3, 4, 3, stride=2, output_padding=1)",
  "ConvTranspose1d(3, 4, 3, padding=1)",
  "LazyLinear(4)",
  "LazyConv2d(4, 3)",
  "MaxPool1d(3)",
  "MaxPool2d(3, stride=2, padding=1, dilation=1, ceil_mode=True)",
  "MaxPool3d(2)",
  "AvgPool1d(3)",
  "AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, divisor_override=2)",
  "AvgPool3d(2)",
  "AdaptiveAvgPool1d(3)",
  "AdaptiveAvgPool2d((3, 4))",
  "AdaptiveMaxPool2d(3)",
  "FractionalMaxPool2d(2, output_size=3)",
  "MaxUnpool2d(2)",
  "MaxUnpool1d(3, stride=2, padding=1)",
  "BatchNorm1d(3)",
  "BatchNorm2d(3, eps=1e-3, momentum=0.2, affine=False)",
  "InstanceNorm1d(3)",
  "InstanceNorm2d(3, affine=True)",
  "LayerNorm(4)",
  "LayerNorm((3, 4), eps=1e-6, elementwise_affine=False)",
  "GroupNorm(2, 4)",
  "RMSNorm(4)",
  "RMSNorm([3, 4], eps=0.5)",
  "LocalResponseNorm(3)",
  "LocalResponseNorm(3, alpha=0.001, beta=0.5, k=2.0)",
  "CrossMapLRN2d(3)",
  "Dropout()",
  "Dropout(0.2)",
  "Dropout1d(0.3)",
  "Dropout2d(0.5, inplace=True)",
  "FeatureAlphaDropout(0.25)",
  "Embedding(10, 3)",
  "Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.5, scale_grad_by_freq=True)",
  "EmbeddingBag(10, 3, max_norm=2.0, mode='max')",
  "RNN(3, 4, num_layers=2, nonlinearity='relu', dropout=0.5, bidirectional=True, batch_first=True)",
  "LSTM(3, 4, proj_size=2)",
  "GRU(3, 4, bias=False)",
  "RNNCell(3, 4)",
  "LSTMCell(3, 4, bias=False)",
  "GRUCell(3, 4)",
  "ReLU()",
  "ReLU6()",
  "LeakyReLU()",
  "LeakyReLU(0.2)",
  "ELU()",
  "SELU()",
  "GELU(approximate='tanh')",
  "SiLU()",
  "Mish()",
  "Hardtanh()",
  "Hardshrink()",
  "Softshrink(0.3)",
  "Threshold(0.1, 20.0)",
  "Softplus()",
  "Softmax(dim=1)",
  "LogSoftmax(dim=-1)",
  "Softmin(dim=0)",
  "Softmax2d()",
  "GLU()",
  "PReLU()",
  "PReLU(3, init=0.1)",
  "RReLU()",
  "RReLU(0.1, 0.3)",
  "Hardsigmoid()",
  "Hardswish()",
  "Sigmoid()",
  "Tanh()",
  "LogSigmoid()",
  "Softsign()",
  "MultiheadAttention(8, 2)",
  "MultiheadAttention(8, 2, dropout=0.1, kdim=4, vdim=6)",
  "Flatten()",
  "Flatten(0, 2)",
  "Unflatten(1, (2, 3))",
  "Fold((4, 5), (2, 2))",
  "Unfold((2, 3), stride=2)",
  "PixelShuffle(2)",
  "PixelUnshuffle(3)",
  "ChannelShuffle(2)",
  "Upsample(size=4, mode='nearest')",
  "Upsample(scale_factor=2.0, mode='bilinear', align_corners=True)",
  "UpsamplingBilinear2d(size=(3, 4))",
  "ZeroPad2d(2)",
  "ZeroPad1d((1, 2))",
  "ConstantPad1d(2, 3.5)",
  "ConstantPad2d((1, 1, 2, 0), 0.0)",
  "ReflectionPad1d(2)",
  "ReflectionPad2d((1, 1, 2, 0))",
  "ReplicationPad3d(1)",
  "CircularPad2d(1)",
  "CosineSimilarity()",
  "CosineSimilarity(dim=0, eps=1e-6)",
  "PairwiseDistance()",
  "PairwiseDistance(p=1.0, eps=1e-5, keepdim=True)",
  "Identity()",
  "L1Loss()",
  "MSELoss(reduction='sum')",
  "CrossEntropyLoss(label_smoothing=0.1, ignore_index=3)",
  "NLLLoss()",
  "BCEWithLogitsLoss()",
  "SmoothL1Loss(beta=0.5)",
  "KLDivLoss(log_target=True)",
  "MarginRankingLoss(margin=0.5)",
  "TripletMarginLoss(margin=2.0, p=1.0)",
  "MultiMarginLoss(p=2, margin=0.5)",
  "PoissonNLLLoss(log_input=False, full=True, eps=1e-6)",
  "CTCLoss(blank=1, zero_infinity=True)",
  "TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)",
  "TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.1)",
  "AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8], div_value=2.0)",
  "LPPool1d(2.0, 3)",
  "LPPool2d(1.0, 3, stride=2)",
  "LPPool3d(2.0, 2)",
  "Softplus(beta=2.0, threshold=-100.0)",
  "Softshrink(1.0)",
  "Hardshrink(1.0)",
  "ConstantPad1d(2, 3.0)",
  "ConstantPad2d(1, 3.0)",
  "ConstantPad3d(1, -1.0)",
  "ELU(alpha=2.0)",
  "CELU(2.0)",
  "Hardtanh(-2.0, 2.0)",
  "LeakyReLU(1.0)",
  "Threshold(1.0, 2.0)",
  "Dropout(1.0)",
  "Dropout(0.0)",
  "Dropout2d(1.0)",
  "AlphaDropout(0.0)",
  "RReLU(0.0, 1.0)",
  "PReLU(init=1.0)",
  "BatchNorm1d(3, eps=1.0, momentum=1.0)",
  "InstanceNorm1d(3, eps=1.0, momentum=0.0)",
  "LayerNorm(4, eps=1.0)",
  "GroupNorm(2, 4, eps=1.0)",
  "RMSNorm(4, eps=1.0)",
  "LocalResponseNorm(3, alpha=1.0, beta=1.0, k=1.0)",
  "CrossMapLRN2d(3, alpha=1.0, beta=1.0, k=2.0)",
  "Embedding(10, 3, max_norm=1.0, norm_type=1.0)",
  "EmbeddingBag(10, 3, max_norm=2.0, norm_type=3.0)",
  "RNN(3, 4, dropout=0.0)",
  "LSTM(3, 4, dropout=1.0, num_layers=2)",
  "CosineSimilarity(eps=1.0)",
  "PairwiseDistance(p=1.0, eps=1.0)",
  "HuberLoss(delta=2.0)",
  "SmoothL1Loss(beta=1.0)",
  "MarginRankingLoss(margin=1.0)",
  "HingeEmbeddingLoss(margin=1.0)",
  "CosineEmbeddingLoss(margin=1.0)",
  "TripletMarginLoss(margin=2.0, p=3.0, eps=1.0)",
  "MultiMarginLoss(p=2, margin=2.0)",
  "CrossEntropyLoss(label_smoothing=0.0)",
  "PoissonNLLLoss(eps=1.0)",
  "GaussianNLLLoss(eps=1.0)",
  "Upsample(scale_factor=2.0)",
  "Upsample(scale_factor=(2.0, 3.0), mode='nearest')",
  "UpsamplingNearest2d(scale_factor=2.0)",
  "UpsamplingBilinear2d(scale_factor=3.0)",
  "MultiheadAttention(8, 2, dropout=1.0)",
  "TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, layer_norm_eps=1.0)",
  "AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8], div_value=4.0)",
  "FractionalMaxPool2d(2, output_ratio=0.5)",
  "FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 0.5))",
  "Fold(4, 2, dilation=1, padding=0, stride=1)",
}

local PY = [==[
import ast
import torch.nn as nn
def lua(n):
    if isinstance(n, ast.Constant):
        v = n.value
        if isinstance(v, bool): return 'true' if v else 'false'
        if isinstance(v, str): return json.dumps(v)
        if isinstance(v, float) and v == int(v): return str(int(v))   # Lua cannot tell 2.0 from 2
        return repr(v)
    if isinstance(n, (ast.Tuple, ast.List)): return '{' + ', '.join(lua(e) for e in n.elts) + '}'
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub): return '-' + lua(n.operand)
    raise ValueError(ast.dump(n))
out = []
for case in json.loads(CASES_JSON):
    c = ast.parse(case).body[0].value
    args = [lua(a) for a in c.args]
    if c.keywords: args.append('{' + ', '.join('%s = %s' % (k.arg, lua(k.value)) for k in c.keywords) + '}')
    out.append(dict(lua='return torch.nn.%s(%s)' % (c.func.id, ', '.join(args)), repr=repr(eval('nn.' + case))))
print(json.dumps(out))
]==]

describe("nn module reprs equal PyTorch's", function()
  local ref
  setup(function()
    ref = pytorch.run((PY:gsub("CASES_JSON", function() return ("%q"):format(cjson.encode(CASES)) end)))
  end)

  it("for " .. #CASES .. " layers (numbers by the signature's int/float type)", function()
    local bad = {}
    for i, case in ipairs(CASES) do
      local fn = assert(load(ref[i].lua, "=" .. case, "t", setmetatable({ torch = torch }, { __index = _G })))
      local ok, m = pcall(fn)
      local got = ok and tostring(m) or ("error: " .. tostring(m))
      if got ~= ref[i].repr then
        bad[#bad + 1] = ("%s\n    lua:     %s\n    PyTorch: %s\n    ltorch:  %s"):format(case, ref[i].lua, ref[i].repr, got)
      end
    end
    assert(#bad == 0, #bad .. " reprs differ:\n" .. table.concat(bad, "\n"))
  end)
end)
