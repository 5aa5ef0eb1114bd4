--[[
  torch.nn._fargs — PyTorch's Python signatures for the hand-written torch.nn.functional callables
  and the nn module constructors (internal). Binding is torch._pysig's, as Python binds a call:

      local S = A.signature("mse_loss", "input, target, size_average=None, reduce=None, reduction='mean', weight=None")
      local a = A.bind(S, ...)     -- a.input, a.target, a.reduction == "mean", ...
      A.init(Linear, "in_features, out_features, bias=True, device=None, dtype=None")

  Positional values fill the parameters in order; a trailing keyword table (string keys, no array
  part) fills them by name; `*` starts the keyword-only ones. Python's None is nil (a nil given
  positionally fills a required parameter, as None does). Misuse reads
  like Python's and blames the user's line (the first frame outside ltorch's own files):
      mse_loss: got multiple values for argument 'reduction'
      mse_loss: unexpected keyword argument 'reductoin' (did you mean 'reduction'?)
      gaussian_nll_loss: missing required argument 'var'

  Also the losses' shared pieces: reduction(who, a) reads `reduction` (and the legacy
  size_average / reduce) as torch.nn._reduction does; broadcast(who, input, target) is the Python
  wrappers' `torch.broadcast_tensors(input, target)`, with their warning, once per loss.
]]
local torch = require "torch"
local layer_fail = require("torch.nn._layer_util").fail
local P = require "torch._pysig"

local M = {}

--[[ Raises msg blaming the first caller outside lua/torch/nn/ (the user's line), however many
     functional-internal frames lie between. ]]
function M.fail(msg, ...)
  if select("#", ...) > 0 then msg = msg:format(...) end
  layer_fail(msg)   -- not a tail call: the walk skips this frame like every lua/torch/nn/ one
end

--[[ definer(into) -> def(name, text, impl): def sets into[name] to a function that binds its
     arguments by the Python signature `text` and calls impl(name, sig, bound). ]]
function M.definer(into)
  return function(name, text, impl)
    local sig = M.signature(name, text)
    into[name] = function(...) return impl(name, sig, M.bind(sig, ...)) end
  end
end

--[[ Calls f(...) and returns its results; an error it raises (a libtorch failure, "<op>: ...")
     is raised again at the user's line, without the position of the ltorch frame that raised it. ]]
local function rethrow(ok, ...)
  if ok then return ... end
  local msg = ...
  if type(msg) == "string" then msg = msg:gsub("^[^\n]-torch/[%w_/]+%.lua:%d+: ", "", 1) end
  M.fail(msg)
end
function M.call(f, ...) return rethrow(pcall(f, ...)) end

M.signature, M.bind, M.bind_given, M.is_keywords = P.signature, P.bind, P.bind_given, P.is_keywords

M.init = P.init   -- a module class's constructor with PyTorch's signature (torch._pysig)

---------------------------------------------------------------- argument checks
local function typename(v) return torch.is_tensor(v) and "Tensor" or type(v) end

-- "bad argument #<position of name> to '<sig's name>' (<what> expected, got <got>)"
local function bad(sig, name, what, got)
  M.fail("bad argument #%d to '%s' (%s expected, got %s)", sig.index[name], sig.name, what, got)
end

-- Argument `name` of sig must be a Tensor (or nil when optional).
function M.tensor(sig, a, name, optional)
  local v = a[name]
  if v == nil and optional then return nil end
  if not torch.is_tensor(v) then bad(sig, name, "Tensor", typename(v)) end
  if v.h == nil then
    M.fail("%s: tensor was freed (x:free() or a finished torch.scope) and can no longer be used", sig.name)
  end
  return v
end

function M.number(sig, a, name)
  local v = a[name]
  if type(v) ~= "number" then bad(sig, name, "number", typename(v)) end
  return v
end

function M.int(sig, a, name)
  local v = a[name]
  if type(v) ~= "number" or v ~= math.floor(v) then
    bad(sig, name, "integer", type(v) == "number" and tostring(v) or typename(v))
  end
  return v
end

function M.boolean(sig, a, name)
  local v = a[name]
  if type(v) ~= "boolean" then bad(sig, name, "boolean", typename(v)) end
  return v
end

---------------------------------------------------------------- reductions
M.CODES = { none = 0, mean = 1, sum = 2 }

local legacy_warned = false

--[[ torch.nn._reduction.legacy_get_string: size_average and reduce (each nil = True) map to
     'mean' (both true), 'sum' (reduce only) or 'none' (reduce false). ]]
local function legacy(who, size_average, reduce)
  for _, v in pairs({ size_average = size_average, reduce = reduce }) do
    if type(v) ~= "boolean" then M.fail("%s: size_average and reduce must be booleans, got %s", who, typename(v)) end
  end
  if size_average == nil then size_average = true end
  if reduce == nil then reduce = true end
  local r = (size_average and reduce) and "mean" or reduce and "sum" or "none"
  if not legacy_warned then
    legacy_warned = true
    M.warn(("size_average and reduce args will be deprecated, please use reduction='%s' instead."):format(r))
  end
  return r
end

--[[ The reduction of loss `who` from bound arguments a: the string a.reduction, overridden by
     the legacy a.size_average / a.reduce when either is given. `extra` names further accepted
     strings (kl_div's "batchmean"). Returns the string and its ATen code. ]]
function M.reduction(who, a, extra)
  local r = a.reduction
  if a.size_average ~= nil or a.reduce ~= nil then r = legacy(who, a.size_average, a.reduce) end
  if type(r) ~= "string" or not (M.CODES[r] or r == extra) then
    local want = (extra and ("'" .. extra .. "', ") or "") .. "'mean', 'sum' or 'none'"
    if type(r) == "string" then M.fail("%s: reduction must be %s, got '%s'", who, want, r) end
    M.fail("%s: reduction must be the string %s, got %s %s", who, want, typename(r), tostring(r))
  end
  return r, M.CODES[r]
end

---------------------------------------------------------------- broadcasting
function M.shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end
M.same = same

-- The broadcast of sizes a and b, or nil when they do not broadcast.
function M.broadcast_shape(a, b)
  local n, out = math.max(#a, #b), {}
  for i = 1, n do
    local x, y = a[#a - n + i] or 1, b[#b - n + i] or 1
    if x ~= y and x ~= 1 and y ~= 1 then return nil end
    out[i] = x == 1 and y or x
  end
  return out
end

M.warn = function(msg) require("torch._warnings").warn(msg) end
local broadcast_warned = {}

--[[ PyTorch's element-wise losses: a target shaped unlike the input warns (once per loss) and
     both are expanded to their broadcast shape before the ATen op, so that the op's backward sees
     one shape and autograd sums the input gradient back over the expanded dims. ]]
function M.broadcast(who, input, target)
  local si, st = input:size(), target:size()
  if same(si, st) then return input, target end
  if not broadcast_warned[who] then
    broadcast_warned[who] = true
    M.warn(("%s: Using a target size (%s) that is different to the input size (%s). This will likely lead "
      .. "to incorrect results due to broadcasting. Please ensure they have the same size.")
      :format(who, M.shape(target), M.shape(input)))
  end
  local shape = M.broadcast_shape(si, st)
  if shape == nil then   -- libtorch's message, as torch.broadcast_tensors raises it in PyTorch
    local _, err = pcall(torch.broadcast_tensors, { input, target })
    M.fail("%s: %s", who, tostring(err):gsub("^.-torch%.broadcast_tensors: ", "", 1))
  end
  if not same(si, shape) then input = input:expand(shape) end
  if not same(st, shape) then target = target:expand(shape) end
  return input, target
end

-- Resets the once-per-loss warnings (specs).
function M._reset_warnings() broadcast_warned, legacy_warned = {}, false end

return M
