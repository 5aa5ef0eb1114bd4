--[[
  torch.nn.adaptive — nn.AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax
  approximation for GPUs"), as PyTorch's:
  https://pytorch.org/docs/stable/generated/torch.nn.AdaptiveLogSoftmaxWithLoss.html

  The classes are split by `cutoffs` into a shortlist [0, cutoffs[1]) scored by the head, and
  clusters [cutoffs[i], cutoffs[i+1]) each scored by a tail projection; the head also scores one
  logit per cluster. Sub-modules, in PyTorch's order and names (so state_dict keys match):
    head  Linear(in_features, shortlist + n_clusters, bias = head_bias)
    tail  ModuleList of Sequential(Linear(in_features, hsz_i, bias = false), Linear(hsz_i, osz_i, bias = false)),
          hsz_i = floor(in_features / div_value^(i+1)), osz_i = the cluster's size

  Shapes: input (N, in_features) or (in_features); target (N) or () of class indices.
    forward(input, target) -> output, loss   (PyTorch's named tuple (output, loss) as two results)
        output (N): the log-probability of each target; loss: mean of -output
    log_prob(input) -> (N, n_classes) log-probabilities;  predict(input) -> (N) the argmax class

  Usage:
    local asm = nn.AdaptiveLogSoftmaxWithLoss(64, 1000, {10, 100}, {div_value = 4.0})
    local output, loss = asm(hidden, target); loss:backward()
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Linear = require("torch.nn.linear").Linear
local containers = require "torch.nn.containers"
local A = require "torch.nn._fargs"

local M = {}

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

local ASM = Module:extend("AdaptiveLogSoftmaxWithLoss")
M.AdaptiveLogSoftmaxWithLoss = ASM

local CUTOFF_MSG = "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
  .. "where each value is between 1 and n_classes-1"

local function check_cutoffs(cutoffs, n_classes)
  if type(cutoffs) ~= "table" or torch.is_tensor(cutoffs) then
    A.fail("AdaptiveLogSoftmaxWithLoss: cutoffs must be a Lua array of integers, got %s", type(cutoffs))
  end
  if #cutoffs == 0 then A.fail("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of length larger than 0") end
  for i, c in ipairs(cutoffs) do
    if type(c) ~= "number" or c ~= math.floor(c) or c <= 0 or c > n_classes - 1 or (i > 1 and c <= cutoffs[i - 1]) then
      A.fail("AdaptiveLogSoftmaxWithLoss: " .. CUTOFF_MSG)
    end
  end
end

function ASM:__init(in_features, n_classes, cutoffs, opts)
  for _, v in ipairs({ in_features, n_classes }) do
    if type(v) ~= "number" or v ~= math.floor(v) then
      A.fail("AdaptiveLogSoftmaxWithLoss: expected in_features and n_classes as integers, got %s, %s",
        tostring(in_features), tostring(n_classes))
    end
  end
  check_cutoffs(cutoffs, n_classes)
  local f = { dtype = opts.dtype, device = opts.device }
  self.in_features, self.n_classes = in_features, n_classes
  self.cutoffs = { unpack(cutoffs) }
  self.cutoffs[#self.cutoffs + 1] = n_classes
  self.div_value = opts.div_value or 4.0
  self.head_bias = opts.head_bias == true
  self.shortlist_size = self.cutoffs[1]
  self.n_clusters = #self.cutoffs - 1
  self.head_size = self.shortlist_size + self.n_clusters
  self.head = Linear(in_features, self.head_size, { bias = self.head_bias, dtype = f.dtype, device = f.device })
  self.tail = containers.ModuleList()
  for i = 1, self.n_clusters do
    local hsz = math.floor(in_features / self.div_value ^ i)
    local osz = self.cutoffs[i + 1] - self.cutoffs[i]
    self.tail:append(containers.Sequential(Linear(in_features, hsz, { bias = false, dtype = f.dtype, device = f.device }),
      Linear(hsz, osz, { bias = false, dtype = f.dtype, device = f.device })))
  end
end

function ASM:reset_parameters()
  self.head:reset_parameters()
  for _, seq in ipairs(self.tail:list()) do
    seq:get(0):reset_parameters()
    seq:get(1):reset_parameters()
  end
end

-- Checks input / target as PyTorch's forward does; returns them batched and whether they were.
local function check_forward(input, target)
  if not torch.is_tensor(input) or not torch.is_tensor(target) then
    A.fail("AdaptiveLogSoftmaxWithLoss: expected input and target Tensors, got %s, %s", type(input), type(target))
  end
  local td = target:dim()
  if td == 1 then
    if input:size(0) ~= target:size(0) then
      A.fail("AdaptiveLogSoftmaxWithLoss: Input and target should have the same size in the batch dimension.")
    end
    if input:dim() ~= 2 then
      A.fail("AdaptiveLogSoftmaxWithLoss: 1D target tensor expects 2D input tensors, but found inputs with size %s",
        shape(input))
    end
  elseif td == 0 then
    if input:dim() ~= 1 then
      A.fail("AdaptiveLogSoftmaxWithLoss: 0D target tensor expects 1D input tensors, but found inputs with size %s",
        shape(input))
    end
  else
    A.fail("AdaptiveLogSoftmaxWithLoss: 0D or 1D target tensor expected, multi-target not supported")
  end
  if td == 0 then return input:unsqueeze(0), target:unsqueeze(0), false end
  return input, target, true
end

function ASM:forward(input_, target_)
  local input, target, batched = check_forward(input_, target_)
  if input:size(-1) ~= self.in_features then
    A.fail("AdaptiveLogSoftmaxWithLoss: expected input with last dim %d (in_features), got %s", self.in_features,
      shape(input_))
  end
  local used, batch = 0, target:size(0)
  local output = input:new_zeros({ batch })
  local gather_inds = target:new_empty({ batch })
  local cut = { 0, unpack(self.cutoffs) }
  for i = 1, #cut - 1 do
    local mask = target:ge(cut[i]):logical_and(target:lt(cut[i + 1]))
    local rows = mask:nonzero():view(-1)
    if rows:numel() > 0 then
      if i == 1 then
        gather_inds:index_copy_(0, rows, target:masked_select(mask))
      else
        local relative = target:masked_select(mask) - cut[i]
        local cluster_output = self.tail:get(i - 2)(input:index_select(0, rows))
        gather_inds:index_fill_(0, rows, self.shortlist_size + i - 2)
        local local_logprob = torch.log_softmax(cluster_output, 1):gather(1, relative:unsqueeze(1))
        output:index_copy_(0, rows, local_logprob:squeeze(1))
      end
      used = used + rows:numel()
    end
  end
  if used ~= batch then
    A.fail("AdaptiveLogSoftmaxWithLoss: Target values should be in [0, %d], but values in range [%d, %d] were found. ",
      self.n_classes - 1, target:min():item(), target:max():item())
  end
  local head_logprob = torch.log_softmax(self.head(input), 1)
  output = output + head_logprob:gather(1, gather_inds:unsqueeze(1)):squeeze()
  local loss = (-output):mean()
  if not batched then output = output:squeeze(0) end
  return output, loss
end

-- log-probabilities of every class: the shortlist's from the head, each cluster's its own plus
-- the head's cluster logit.
function ASM:_get_full_log_prob(input, head_output)
  local head_logprob = torch.log_softmax(head_output, 1)
  local parts = { head_logprob:narrow(1, 0, self.shortlist_size) }
  for i = 1, self.n_clusters do
    local cluster_logprob = torch.log_softmax(self.tail:get(i - 1)(input), 1)
    parts[#parts + 1] = cluster_logprob + head_logprob:select(1, self.shortlist_size + i - 1):unsqueeze(1)
  end
  return torch.cat(parts, 1)
end

local function check_input(self, input, who)
  if not torch.is_tensor(input) or input:dim() ~= 2 or input:size(1) ~= self.in_features then
    A.fail("AdaptiveLogSoftmaxWithLoss.%s: expected input of shape (N, %d), got %s", who, self.in_features,
      torch.is_tensor(input) and shape(input) or type(input))
  end
end

function ASM:log_prob(input)
  check_input(self, input, "log_prob")
  return self:_get_full_log_prob(input, self.head(input))
end

-- The most probable class per row: the head's argmax when it is in the shortlist, else the
-- full distribution's (computed for those rows only).
function ASM:predict(input)
  check_input(self, input, "predict")
  local head_output = self.head(input)
  local output = torch.argmax(head_output, 1)
  local outside = output:ge(self.shortlist_size)
  if not outside:any():item() then return output end
  if outside:all():item() then return torch.argmax(self:_get_full_log_prob(input, head_output), 1) end
  local rows = outside:nonzero():view(-1)
  local log_prob = self:_get_full_log_prob(input:index_select(0, rows), head_output:index_select(0, rows))
  return output:index_copy(0, rows, torch.argmax(log_prob, 1))
end

A.init(ASM, "in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None")

return M
