--[[
  recipes/resnet.lua — ResNet-18 with torchvision's exact module layout, so torchvision's
  state dicts load with strict key matching (torchvision/models/resnet.py, v0.14).

  What:
    local resnet = require "recipes.resnet"
    local model = resnet.resnet18({num_classes = 10})   -- default 1000, as torchvision
    122 state-dict keys: 62 parameters (20 convs, 20 BatchNorms, fc) and 60 BatchNorm
    buffers (running_mean, running_var, num_batches_tracked); 11,689,512 parameters at 1000
    classes, 11,181,642 at 10.
  Keys read as torchvision's: conv1.weight, bn1.{weight,bias,running_mean,running_var,
  num_batches_tracked}, layer1.0.conv1.weight, layer1.0.bn1.*, layer2.0.downsample.0.weight,
  layer2.0.downsample.1.*, ..., fc.weight, fc.bias.

  Shapes: x (B, 3, H, W) float, normalised with ImageNet's mean/std -> logits (B, num_classes).
  The stem divides H, W by 4 and layers 2-4 by 2 each, so layer4 sees H/32; any H, W >= 32
  works (adaptive average pooling). Init as torchvision: kaiming_normal_(fan_out, relu) on
  convs, BatchNorm weight 1 / bias 0, the fc layer nn.Linear's default.

  Run: this file is a library; recipes/vision_transfer.lua uses it.
]]
local torch = require "torch"
local nn = torch.nn

local M = {}

---------------------------------------------------------------- BasicBlock
-- conv3x3(stride) -> bn -> relu -> conv3x3 -> bn, plus the (downsampled) input, -> relu.
local BasicBlock = nn.Module:extend("BasicBlock")
M.BasicBlock = BasicBlock
BasicBlock.expansion = 1

function BasicBlock:__init(inplanes, planes, stride, downsample)
  stride = stride or 1
  self.conv1 = nn.Conv2d(inplanes, planes, 3, { stride = stride, padding = 1, bias = false })
  self.bn1 = nn.BatchNorm2d(planes)
  self.relu = nn.ReLU()
  self.conv2 = nn.Conv2d(planes, planes, 3, { padding = 1, bias = false })
  self.bn2 = nn.BatchNorm2d(planes)
  if downsample then self.downsample = downsample end
end

function BasicBlock:forward(x)
  local identity = self.downsample and self.downsample(x) or x
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.bn2(self.conv2(out))
  return self.relu(out + identity)
end

---------------------------------------------------------------- ResNet
local ResNet = nn.Module:extend("ResNet")
M.ResNet = ResNet

-- One stage: `blocks` BasicBlocks; the first changes stride/width (1x1 conv + bn shortcut).
local function make_layer(self, planes, blocks, stride)
  local downsample
  if stride ~= 1 or self.inplanes ~= planes then
    downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, { stride = stride, bias = false }),
      nn.BatchNorm2d(planes))
  end
  local list = { BasicBlock(self.inplanes, planes, stride, downsample) }
  rawset(self, "inplanes", planes)
  for i = 2, blocks do list[i] = BasicBlock(planes, planes) end
  return nn.Sequential(unpack(list))
end

function ResNet:__init(layers, num_classes)
  rawset(self, "inplanes", 64)
  self.conv1 = nn.Conv2d(3, 64, 7, { stride = 2, padding = 3, bias = false })
  self.bn1 = nn.BatchNorm2d(64)
  self.relu = nn.ReLU()
  self.maxpool = nn.MaxPool2d(3, { stride = 2, padding = 1 })
  self.layer1 = make_layer(self, 64, layers[1], 1)
  self.layer2 = make_layer(self, 128, layers[2], 2)
  self.layer3 = make_layer(self, 256, layers[3], 2)
  self.layer4 = make_layer(self, 512, layers[4], 2)
  self.avgpool = nn.AdaptiveAvgPool2d({ 1, 1 })
  self.fc = nn.Linear(512, num_classes)
  self:reset_parameters()
end

-- torchvision's init loop: convs kaiming_normal_(fan_out, relu); BatchNorm 1 / 0.
function ResNet:reset_parameters()
  for _, m in ipairs(self:modules()) do
    local name = m._class.__name
    if name == "Conv2d" then
      nn.init.kaiming_normal_(m.weight, { mode = "fan_out", nonlinearity = "relu" })
    elseif name == "BatchNorm2d" then
      nn.init.ones_(m.weight)
      nn.init.zeros_(m.bias)
    end
  end
end

-- (B, 3, H, W) -> (B, 512) pooled features; forward adds fc.
function ResNet:features(x)
  x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
  x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
  return torch.flatten(self.avgpool(x), 1)
end

function ResNet:forward(x) return self.fc(self:features(x)) end

-- resnet18({num_classes = 1000}) -> ResNet with BasicBlocks {2, 2, 2, 2}.
function M.resnet18(opts)
  opts = opts or {}
  local k = opts.num_classes or 1000
  if type(k) ~= "number" or k < 1 or k ~= math.floor(k) then
    error(("bad argument #1 to 'resnet18' (num_classes must be a positive integer, got %s)"):format(tostring(k)), 2)
  end
  return ResNet({ 2, 2, 2, 2 }, k)
end

return M
