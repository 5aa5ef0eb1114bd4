--[[
  torch.nn.sparse — nn.Embedding, a lookup table of learned vectors, and nn.EmbeddingBag, which
  sums, averages or takes the max of bags of them, with PyTorch's arguments, init, state_dict and
  repr (https://pytorch.org/docs/stable/generated/torch.nn.Embedding.html, .../torch.nn.EmbeddingBag.html).

      nn.Embedding(num_embeddings, embedding_dim, padding_idx=nil, max_norm=nil, norm_type=2,
                   scale_grad_by_freq=false, sparse=false, {dtype =, device =})
      nn.Embedding.from_pretrained(weights, {freeze = true, padding_idx =, max_norm =, ...})
      nn.EmbeddingBag(num_embeddings, embedding_dim, max_norm=nil, norm_type=2, scale_grad_by_freq=false,
                      mode="mean", sparse=false, _weight=nil, include_last_offset=false, padding_idx=nil)
          bag(input, offsets=nil, per_sample_weights=nil)   -- or bag(input, {offsets = ...})
      nn.EmbeddingBag.from_pretrained(weights, freeze=true, max_norm=nil, ..., padding_idx=nil)

  Shapes: indices (*) int64 (or int32) in [0, num_embeddings) -> (*, embedding_dim);
  weight (num_embeddings, embedding_dim), drawn from N(0, 1) as PyTorch does.
  padding_idx (0-based, negative counts from the end): that row starts at zero and gets no
  gradient. max_norm: rows looked up are renormalised in place to norm <= max_norm first.
  EmbeddingBag: input (B, n) is B bags of n indices; input (total) with offsets (B) (int64 or
  int32, like input) holds bags one after another, offsets[i] where bag i starts
  (include_last_offset: offsets has B + 1 entries, the last = total) -> (B, embedding_dim);
  an empty bag gives zeros. per_sample_weights (input's shape) scale each row, mode "sum" only.
  padding_idx rows are left out of their bag.

  Usage:  local emb = nn.Embedding(10000, 256, {padding_idx = 0}); local h = emb(tokens)
          local bag = nn.EmbeddingBag(10000, 64, {mode = "sum"}); local h = bag(ids, offsets)
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Parameter = require("torch.nn.module").Parameter
local init = require "torch.nn.initializers"
local U = require "torch.nn._layer_util"
local A = require "torch.nn._fargs"
local F = require "torch.nn.functional"

local M = {}

-- padding_idx in [-num_embeddings, num_embeddings) as PyTorch checks it, made non-negative (or nil).
local function padding_index(name, padding_idx, num_embeddings)
  if padding_idx == nil then return nil end
  if not U.is_int(padding_idx) or padding_idx >= num_embeddings or padding_idx < -num_embeddings then
    U.fail(("%s: padding_idx must be within num_embeddings (%d), got %s"):format(name, num_embeddings,
      tostring(padding_idx)))
  end
  return padding_idx < 0 and num_embeddings + padding_idx or padding_idx
end

local ARGS = { "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse", "_weight", "dtype", "device" }

local Embedding = Module:extend("Embedding")
M.Embedding = Embedding

function Embedding:__init(num_embeddings, embedding_dim, ...)
  local a = U.args("Embedding", ARGS, ...)
  local sizes = { num_embeddings, embedding_dim }
  for i = 1, 2 do
    local v = sizes[i]
    if not U.is_int(v) or v < 0 then
      U.fail(("Embedding: %s must be a non-negative integer, got %s"):format(
        i == 1 and "num_embeddings" or "embedding_dim", tostring(v)))
    end
  end
  self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
  self.padding_idx = padding_index("Embedding", a.padding_idx, num_embeddings)
  self.max_norm = a.max_norm
  self.norm_type = a.norm_type == nil and 2.0 or a.norm_type
  self.scale_grad_by_freq = a.scale_grad_by_freq == true
  if a._weight == nil then
    self.weight = Parameter(torch.empty(num_embeddings, embedding_dim, { dtype = a.dtype, device = a.device }))
    self:reset_parameters()
  else
    local w = a._weight
    if not torch.is_tensor(w) or w:dim() ~= 2 or w:size(0) ~= num_embeddings or w:size(1) ~= embedding_dim then
      U.fail(("Embedding: _weight must be a Tensor of shape [%d, %d], got %s"):format(num_embeddings, embedding_dim,
        torch.is_tensor(w) and U.shape(w) or type(w)))
    end
    self.weight = Parameter(w:detach())  -- shares w's storage, as PyTorch's Parameter(_weight)
  end
  self.sparse = a.sparse == true
end

function Embedding:reset_parameters()
  init.normal_(self.weight)
  self:_fill_padding_idx_with_zero()
end

function Embedding:_fill_padding_idx_with_zero()
  if self.padding_idx ~= nil then
    torch.no_grad(function() self.weight:select(0, self.padding_idx):fill_(0) end)
  end
end

function Embedding:_label() return ("Embedding(%d, %d)"):format(self.num_embeddings, self.embedding_dim) end

--[[ Checks an index input of Embedding / EmbeddingBag: a Tensor of int64 or int32. On CPU libtorch
     reports a bad index as an error; on an accelerator it would be a device-side assert that
     poisons the context, so the range is checked there first (two reductions and a sync). ]]
local function check_indices(label, input, num_embeddings)
  if not torch.is_tensor(input) then U.fail(("%s: expected a Tensor of indices, got %s"):format(label, type(input))) end
  local dt = tostring(input.dtype):gsub("^torch%.", "")
  if dt ~= "int64" and dt ~= "int32" then
    U.fail(("%s: expected int64 or int32 indices, got %s of shape %s"):format(label, dt, U.shape(input)))
  end
  local kind = input.device.type   -- "meta" has no values to check
  if kind ~= "cpu" and kind ~= "meta" and input:numel() > 0 then
    local lo, hi = input:min():item(), input:max():item()
    if lo < 0 or hi >= num_embeddings then
      U.fail(("%s: index out of range: indices must lie in [0, %d), got values in [%d, %d] (input of shape %s)")
        :format(label, num_embeddings, lo, hi, U.shape(input)))
    end
  end
end

function Embedding:forward(input)
  local label = self:_label()
  check_indices(label, input, self.num_embeddings)
  if self.max_norm ~= nil then
    -- embedding_renorm_ works on contiguous indices; it rescales the weight rows in place.
    input = input:contiguous()
    torch.no_grad(function() torch.embedding_renorm_(self.weight, input, self.max_norm, self.norm_type) end)
  end
  return U.guard(label, torch.embedding, self.weight, input, self.padding_idx or -1, self.scale_grad_by_freq,
    self.sparse)
end

function Embedding:extra_repr()
  local s = ("%d, %d"):format(self.num_embeddings, self.embedding_dim)
  if self.padding_idx ~= nil then s = s .. ", padding_idx=" .. self.padding_idx end
  if self.max_norm ~= nil then s = s .. ", max_norm=" .. U.pyrepr(self.max_norm, true) end
  if self.norm_type ~= 2 then s = s .. ", norm_type=" .. U.pyrepr(self.norm_type, true) end
  if self.scale_grad_by_freq then s = s .. ", scale_grad_by_freq=True" end
  if self.sparse then s = s .. ", sparse=True" end
  return s
end

--[[ Embedding.from_pretrained(embeddings (rows, cols), {freeze = true, padding_idx =, max_norm =,
     norm_type =, scale_grad_by_freq =, sparse =}): wraps the given tensor as the weight
     (shared, not copied, as PyTorch); freeze = true means no gradient. ]]
function Embedding.from_pretrained(embeddings, opts)
  if not torch.is_tensor(embeddings) or embeddings:dim() ~= 2 then
    U.fail(("Embedding.from_pretrained: embeddings must be a 2-D Tensor, got %s"):format(
      torch.is_tensor(embeddings) and U.shape(embeddings) or type(embeddings)))
  end
  opts = opts or {}
  local kw = { _weight = embeddings }
  for k, v in pairs(opts) do
    if k ~= "freeze" then kw[k] = v end
  end
  local emb = Embedding(embeddings:size(0), embeddings:size(1), kw)
  emb.weight.requires_grad = opts.freeze == false
  return emb
end

---------------------------------------------------------------- EmbeddingBag
local EmbeddingBag = Module:extend("EmbeddingBag")
M.EmbeddingBag = EmbeddingBag

local BAG_ARGS = { "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse", "_weight", "include_last_offset",
  "padding_idx", "dtype", "device" }

function EmbeddingBag:__init(num_embeddings, embedding_dim, ...)
  local a = U.args("EmbeddingBag", BAG_ARGS, ...)
  for i, v in ipairs({ num_embeddings, embedding_dim }) do
    if not U.is_int(v) or v < 0 then
      U.fail(("EmbeddingBag: %s must be a non-negative integer, got %s"):format(
        i == 1 and "num_embeddings" or "embedding_dim", tostring(v)))
    end
  end
  self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
  self.max_norm = a.max_norm
  self.norm_type = a.norm_type == nil and 2.0 or a.norm_type
  self.scale_grad_by_freq = a.scale_grad_by_freq == true
  self.padding_idx = padding_index("EmbeddingBag", a.padding_idx, num_embeddings)
  if a._weight == nil then
    self.weight = Parameter(torch.empty(num_embeddings, embedding_dim, { dtype = a.dtype, device = a.device }))
    self:reset_parameters()
  else
    local w = a._weight
    if not torch.is_tensor(w) or w:dim() ~= 2 or w:size(0) ~= num_embeddings or w:size(1) ~= embedding_dim then
      U.fail(("EmbeddingBag: Shape of weight does not match num_embeddings and embedding_dim: expected [%d, %d], "
        .. "got %s"):format(num_embeddings, embedding_dim, torch.is_tensor(w) and U.shape(w) or type(w)))
    end
    self.weight = Parameter(w:detach())  -- shares w's storage, as PyTorch's Parameter(_weight)
  end
  self.mode = a.mode == nil and "mean" or a.mode
  self.sparse = a.sparse == true
  self.include_last_offset = a.include_last_offset == true
end

EmbeddingBag.reset_parameters = Embedding.reset_parameters
EmbeddingBag._fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

function EmbeddingBag:_label() return ("EmbeddingBag(%d, %d)"):format(self.num_embeddings, self.embedding_dim) end

local BAG_FORWARD = A.signature("EmbeddingBag.forward", "input, offsets=None, per_sample_weights=None")

-- forward(input, offsets=nil, per_sample_weights=nil): positional or in a trailing keyword table.
function EmbeddingBag:forward(...)
  local a = A.bind(BAG_FORWARD, ...)
  local input, label = a.input, self:_label()
  check_indices(label, input, self.num_embeddings)
  return U.guard(label, F.embedding_bag, input, self.weight, a.offsets, self.max_norm, self.norm_type,
    self.scale_grad_by_freq, self.mode, self.sparse, a.per_sample_weights, self.include_last_offset, self.padding_idx)
end

function EmbeddingBag:extra_repr()
  local s = ("%d, %d"):format(self.num_embeddings, self.embedding_dim)
  if self.max_norm ~= nil then s = s .. ", max_norm=" .. U.pyrepr(self.max_norm, true) end
  if self.norm_type ~= 2 then s = s .. ", norm_type=" .. U.pyrepr(self.norm_type, true) end
  if self.scale_grad_by_freq then s = s .. ", scale_grad_by_freq=True" end
  s = s .. ", mode='" .. tostring(self.mode) .. "'"
  if self.padding_idx ~= nil then s = s .. ", padding_idx=" .. self.padding_idx end
  return s
end

local BAG_PRETRAINED = A.signature("EmbeddingBag.from_pretrained", "embeddings, freeze=True, max_norm=None, "
  .. "norm_type=2.0, scale_grad_by_freq=False, mode='mean', sparse=False, include_last_offset=False, padding_idx=None")

--[[ EmbeddingBag.from_pretrained(embeddings (rows, cols), freeze=true, max_norm=nil, norm_type=2,
     scale_grad_by_freq=false, mode="mean", sparse=false, include_last_offset=false,
     padding_idx=nil): wraps the given tensor as the weight (shared, not copied, as PyTorch);
     freeze = true means no gradient. ]]
function EmbeddingBag.from_pretrained(...)
  local a = A.bind(BAG_PRETRAINED, ...)
  local embeddings = a.embeddings
  if not torch.is_tensor(embeddings) or embeddings:dim() ~= 2 then
    U.fail(("EmbeddingBag.from_pretrained: Embeddings parameter is expected to be 2-dimensional, got %s"):format(
      torch.is_tensor(embeddings) and U.shape(embeddings) or type(embeddings)))
  end
  local bag = EmbeddingBag(embeddings:size(0), embeddings:size(1), { _weight = embeddings, max_norm = a.max_norm,
    norm_type = a.norm_type, scale_grad_by_freq = a.scale_grad_by_freq, mode = a.mode, sparse = a.sparse,
    include_last_offset = a.include_last_offset, padding_idx = a.padding_idx })
  bag.weight.requires_grad = not a.freeze
  return bag
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(M.Embedding, "num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, "
  .. "scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, "
  .. "dtype=None")

A.init(M.EmbeddingBag, "num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, "
  .. "mode='mean', sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None, "
  .. "dtype=None")

return M
