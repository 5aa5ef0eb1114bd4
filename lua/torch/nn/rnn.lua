--[[
  torch.nn.rnn — recurrent layers nn.LSTM, nn.GRU and nn.RNN (tanh/relu) over ATen's fused
  lstm/gru/rnn_* ops, so results, init and parameter names are PyTorch's:
  https://pytorch.org/docs/stable/generated/torch.nn.LSTM.html

  nn.LSTM(input_size, hidden_size, {num_layers = 1, bias = true, batch_first = false,
          dropout = 0, bidirectional = false, proj_size = 0, dtype =, device =})
  nn.GRU(...) and nn.RNN(..., {nonlinearity = "tanh" | "relu", ...}) take the same options
  (proj_size is LSTM-only).

  Shapes (T time, N batch, Hin input_size, H hidden_size, Hout = proj_size or H, D = 2 if
  bidirectional else 1, L num_layers):
    input (T, N, Hin), or (N, T, Hin) with batch_first, or unbatched (T, Hin)
    h0 / h_n (D*L, N, Hout), c0 / c_n (D*L, N, H); unbatched: without the N dim
    output (T, N, D*Hout) — (N, T, D*Hout) with batch_first — the last layer's h at every step
  Parameters per layer l (suffix "_reverse" for the backward direction), in PyTorch's order:
    weight_ih_l{l} (G*H, Hin or D*Hout), weight_hh_l{l} (G*H, Hout), bias_ih_l{l} (G*H),
    bias_hh_l{l} (G*H), weight_hr_l{l} (Hout, H) with proj_size; G = 4 (LSTM), 3 (GRU), 1 (RNN).
    All are initialised U(-1/sqrt(H), 1/sqrt(H)) in that order.

  Usage:
    local lstm = nn.LSTM(10, 20, {num_layers = 2, batch_first = true})
    local out, h_n, c_n = lstm(x)                      -- hx = nil: zeros
    out, h_n, c_n = lstm(x, {h_n, c_n})                 -- carry the state (PyTorch's (h0, c0))
    local gru = nn.GRU(10, 20); local out, h_n = gru(x, h0)
    out, h_n = gru(x, nil, {lengths = {5, 3, 2}})       -- padded batch of variable lengths
    local packed_out, h_n2 = gru(torch.nn.utils.rnn.pack_sequence({a, b}, false))   -- PackedSequence in and out

  `lengths` (a Lua array or int64 tensor, one per batch entry, in any order) runs the layer with
  PyTorch's packed-sequence semantics (pack_padded_sequence(enforce_sorted = false) -> layer ->
  pad_packed_sequence(total_length = T)): steps past a sequence's length are not run, output is
  zero there, and h_n / c_n hold each sequence's state at its last valid step (the reverse
  direction starts at that step). A PackedSequence input (torch.nn.utils.rnn) gives a
  PackedSequence output, as in PyTorch; h0 / h_n are then in the original batch order.
]]
local torch = require "torch"
local module = require "torch.nn.module"
local init = require "torch.nn.initializers"
local U = require "torch.nn._layer_util"
local pack = require("torch._args").pack

local Module, Parameter = module.Module, module.Parameter
local A = require "torch.nn._fargs"
local R = require "torch.nn.utils_rnn"

local M = {}

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end
local function dims(...) return "[" .. table.concat({ ... }, ", ") .. "]" end

local gate_counts = { LSTM = 4, GRU = 3, RNN_TANH = 1, RNN_RELU = 1 }

---------------------------------------------------------------- RNNBase
local RNNBase = Module:extend("RNNBase")
M.RNNBase = RNNBase

-- Python's type name of a Lua value, for PyTorch's "should be of type" messages.
local function pytype(v)
  if type(v) == "number" then return v % 1 == 0 and "int" or "float" end
  if type(v) == "boolean" then return "bool" end
  if type(v) == "string" then return "str" end
  return type(v)
end

-- PyTorch's RNNBase.__init__ checks, in its order and with its messages.
local function check_args(name, mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
  if type(dropout) ~= "number" or not (dropout >= 0 and dropout <= 1) then
    error(name .. ": dropout should be a number in range [0, 1] representing the probability of an element being zeroed", 5)
  end
  if type(num_layers) ~= "number" then
    error(("%s: num_layers should be of type int, got: %s"):format(name, pytype(num_layers)), 5)
  end
  if dropout > 0 and num_layers == 1 then
    require("torch._warnings").warn(("dropout option adds dropout after all but last recurrent layer, so non-zero "
      .. "dropout expects num_layers greater than 1, but got dropout=%s and num_layers=1"):format(U.pyfloat(dropout)), 5)
  end
  if type(bias) ~= "boolean" then error(("%s: bias should be of type bool, got: %s"):format(name, pytype(bias)), 5) end
  if type(batch_first) ~= "boolean" then
    error(("%s: batch_first should be of type bool, got: %s"):format(name, pytype(batch_first)), 5)
  end
  for _, a in ipairs({ { "input_size", input_size }, { "hidden_size", hidden_size } }) do
    if pytype(a[2]) ~= "int" then error(("%s: %s should be of type int, got: %s"):format(name, a[1], pytype(a[2])), 5) end
    if a[2] <= 0 then error(("%s: %s must be greater than zero"):format(name, a[1]), 5) end
  end
  if num_layers <= 0 then error(name .. ": num_layers must be greater than zero", 5) end
  if num_layers % 1 ~= 0 then error(name .. ": 'float' object cannot be interpreted as an integer", 5) end
  if proj_size ~= 0 and mode ~= "LSTM" then
    error(name .. ": proj_size argument is only supported for LSTM, not RNN or GRU", 5)
  end
  if type(proj_size) ~= "number" or proj_size < 0 then
    error(name .. ": proj_size should be a positive integer or zero to disable projections", 5)
  end
  if proj_size >= hidden_size then error(name .. ": proj_size has to be smaller than hidden_size", 5) end
end

function RNNBase:__init(mode, input_size, hidden_size, opts)
  local name = mode:match("^RNN") and "RNN" or mode
  opts = opts or {}
  local dropout, proj_size, num_layers = opts.dropout or 0, opts.proj_size or 0, opts.num_layers or 1
  local bias, batch_first = opts.bias, opts.batch_first
  if bias == nil then bias = true end
  if batch_first == nil then batch_first = false end
  check_args(name, mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
  -- bidirectional is only tested for truth in PyTorch (bidirectional=1 is true, 0 false)
  local bidirectional = opts.bidirectional
  if type(bidirectional) == "number" then bidirectional = bidirectional ~= 0 end
  self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
  self.num_layers = num_layers
  self.bias = bias
  self.batch_first = batch_first
  self.dropout = dropout
  self.bidirectional = bidirectional == true
  self.proj_size = proj_size

  local f = { dtype = opts.dtype, device = opts.device }
  local gate_size = gate_counts[mode] * hidden_size
  local num_directions = self.bidirectional and 2 or 1
  local real_hidden = proj_size > 0 and proj_size or hidden_size
  self._flat_weights_names = {}
  for layer = 0, self.num_layers - 1 do
    for direction = 0, num_directions - 1 do
      local layer_input = layer == 0 and input_size or real_hidden * num_directions
      local suffix = layer .. (direction == 1 and "_reverse" or "")
      local shapes = { { "weight_ih_l", { gate_size, layer_input } }, { "weight_hh_l", { gate_size, real_hidden } } }
      if self.bias then
        shapes[#shapes + 1] = { "bias_ih_l", { gate_size } }
        shapes[#shapes + 1] = { "bias_hh_l", { gate_size } }
      end
      if proj_size > 0 then shapes[#shapes + 1] = { "weight_hr_l", { proj_size, hidden_size } } end
      for _, s in ipairs(shapes) do
        local pname = s[1] .. suffix
        self:register_parameter(pname, Parameter(torch.empty(s[2], f)))
        self._flat_weights_names[#self._flat_weights_names + 1] = pname
      end
    end
  end
  self:reset_parameters()
end

function RNNBase:reset_parameters()
  local stdv = self.hidden_size > 0 and 1 / math.sqrt(self.hidden_size) or 0
  for _, p in ipairs(self:parameters()) do init.uniform_(p, -stdv, stdv) end
end

-- The parameters in ATen's flat order (looked up by name, so load_state_dict and :to() show).
function RNNBase:_flat_weights()
  local out = {}
  for i, n in ipairs(self._flat_weights_names) do out[i] = self[n] end
  return out
end

-- {{weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0}, ...} per layer and direction.
function RNNBase:all_weights()
  local per = #self._flat_weights_names / (self.num_layers * (self.bidirectional and 2 or 1))
  local flat, out = self:_flat_weights(), {}
  for i = 1, #flat, per do out[#out + 1] = { unpack(flat, i, i + per - 1) } end
  return out
end

-- cuDNN weight flattening is not used here (ATen's op accepts separate weights); kept for ports.
function RNNBase:flatten_parameters() end

function RNNBase:_name() return ("%s(%d, %d)"):format(self._class.__name, self.input_size, self.hidden_size) end
-- Raises "<LSTM(10, 20)>: message"; level 1 blames the caller of the method calling _fail.
function RNNBase:_fail(level, fmt, ...) error(self:_name() .. ": " .. fmt:format(...), level + 2) end

function RNNBase:extra_repr()
  local s = { ("%d, %d"):format(self.input_size, self.hidden_size) }
  if self.proj_size ~= 0 then s[#s + 1] = "proj_size=" .. self.proj_size end
  if self.num_layers ~= 1 then s[#s + 1] = "num_layers=" .. self.num_layers end
  if not self.bias then s[#s + 1] = "bias=False" end
  if self.batch_first then s[#s + 1] = "batch_first=True" end
  if self.dropout ~= 0 then s[#s + 1] = "dropout=" .. U.pyfloat(self.dropout) end
  if self.bidirectional then s[#s + 1] = "bidirectional=True" end
  return table.concat(s, ", ")
end

-- (lengths array | int64 tensor) -> int64 CPU tensor, checked against batch size and T.
function RNNBase:_lengths(lengths, batch, steps)
  local t = lengths
  if type(lengths) == "table" then t = torch.tensor(lengths, { dtype = torch.int64 })
  elseif not torch.is_tensor(lengths) then
    self:_fail(2, "lengths must be a Lua array or an int64 Tensor, got %s", type(lengths))
  else
    t = lengths:to("cpu", torch.int64)
  end
  if t:dim() ~= 1 or t:size(0) ~= batch then
    self:_fail(2, "expected %d lengths (one per batch entry), got %s", batch, shape(t))
  end
  local lo, hi = t:min():item(), t:max():item()
  if lo < 1 or hi > steps then
    self:_fail(2, "lengths must lie in [1, %d] (the padded sequence length), got min %d, max %d", steps, lo, hi)
  end
  return t
end

-- Calls the ATen op; a libtorch failure (a dtype or device mismatch) is re-raised naming the module.
function RNNBase:_call(op, ...)
  local results = (pack(pcall(op, ...)))   -- not { ... }: see torch._args.pack
  if not results[1] then self:_fail(3, "%s", (tostring(results[2]):gsub("^[^\n]-:%d+: ", ""))) end
  return (pack(unpack(results, 2, table.maxn(results))))
end

--[[ Runs the layer. input is batched (3-D); hx a list of state tensors ({h} or {h, c}).
     Returns output and the list of final states. ]]
function RNNBase:_run(input, hx, lengths)
  local op = ({ LSTM = torch.lstm, GRU = torch.gru, RNN_TANH = torch.rnn_tanh, RNN_RELU = torch.rnn_relu })[self.mode]
  local state = self.mode == "LSTM" and hx or hx[1]
  local w = self:_flat_weights()
  local results
  if lengths == nil then
    results = self:_call(op, input, state, w, self.bias, self.num_layers, self.dropout, self.training,
      self.bidirectional, self.batch_first)
    return results[1], { unpack(results, 2) }
  end
  -- packed semantics: sort by length (descending), pack, run, unpack, restore the batch order
  local bdim = self.batch_first and 0 or 1
  local steps = input:size(bdim == 0 and 1 or 0)
  local sorted_lengths, sorted = torch.sort(lengths, { descending = true })
  local unsorted = torch.empty_like(sorted):scatter_(0, sorted, torch.arange(0, sorted:numel()))
  sorted, unsorted = sorted:to(input.device), unsorted:to(input.device)
  local data, batch_sizes = torch._pack_padded_sequence(input:index_select(bdim, sorted), sorted_lengths, self.batch_first)
  if self.mode == "LSTM" then
    state = { hx[1]:index_select(1, sorted), hx[2]:index_select(1, sorted) }
  else
    state = state:index_select(1, sorted)
  end
  results = self:_call(op, data, batch_sizes, state, w, self.bias, self.num_layers, self.dropout, self.training,
    self.bidirectional)
  local out = torch._pad_packed_sequence(results[1], batch_sizes, self.batch_first, 0, steps)
  local finals = {}
  for i = 2, #results do finals[i - 1] = results[i]:index_select(1, unsorted) end
  return out:index_select(bdim, unsorted), finals
end

-- hx (nil, h0, or {h0, c0} for LSTM) -> the list of state tensors; level as _fail's.
function RNNBase:_states(hx, level)
  if hx == nil then return {} end
  if self.mode ~= "LSTM" then
    if not torch.is_tensor(hx) then self:_fail(level + 1, "expected h0 as a Tensor, got %s", type(hx)) end
    return { hx }
  end
  if type(hx) ~= "table" or torch.is_tensor(hx) or not torch.is_tensor(hx[1]) or not torch.is_tensor(hx[2]) then
    local got = (type(hx) == "table" and not torch.is_tensor(hx)) and ("a table of %d values"):format(table.maxn(hx))
      or (torch.is_tensor(hx) and "a Tensor" or type(hx))
    self:_fail(level + 1, "expected hx as a table {h0, c0} of two Tensors, got %s%s", got, torch.is_tensor(hx)
      and " (LSTM returns three values, output, h_n, c_n: write `local out, h, c = lstm(x, hx)` and pass {h, c})" or "")
  end
  return { hx[1], hx[2] }
end

-- Checks each state against {layers, batch, size}; level as _fail's.
function RNNBase:_check_states(states, batch, level)
  local layers = self.num_layers * (self.bidirectional and 2 or 1)
  local hout = self.proj_size > 0 and self.proj_size or self.hidden_size
  local expected = { { layers, batch, hout }, { layers, batch, self.hidden_size } }
  for i, s in ipairs(states) do
    local e = expected[i]
    if s:dim() ~= 3 or s:size(0) ~= e[1] or s:size(1) ~= e[2] or s:size(2) ~= e[3] then
      self:_fail(level + 1, "expected %s of shape %s (num_layers*num_directions, batch, %s), got %s",
        i == 1 and "h0" or "c0", dims(unpack(e)), (i == 1 and self.proj_size > 0) and "proj_size" or "hidden_size",
        shape(s))
    end
  end
  return expected
end

--[[ A PackedSequence input (torch.nn.utils.rnn): ATen's packed overload (data, batch_sizes) runs
     each sequence for its own length. hx and h_n are in the caller's batch order: hx is permuted
     by sorted_indices before the op, the final states by unsorted_indices after, as PyTorch's
     permute_hidden. Returns a PackedSequence (same batch_sizes and indices), h_n [, c_n]. ]]
function RNNBase:_forward_packed(packed, hx)
  local data, batch_sizes = packed.data, packed.batch_sizes
  local sorted, unsorted = packed.sorted_indices, packed.unsorted_indices
  if data:dim() ~= 2 then self:_fail(1, "expected a PackedSequence of 2-D data, got %s", shape(data)) end
  if data:size(-1) ~= self.input_size then
    self:_fail(1, "expected input with last dim %d (input_size), got %s", self.input_size, shape(data))
  end
  local states = self:_states(hx, 1)
  for i, s in ipairs(states) do
    if s:dim() ~= 3 then self:_fail(1, "for a PackedSequence input, %s should be 3-D, got %s", i == 1 and "h0" or "c0",
      shape(s)) end
  end
  local expected = self:_check_states(states, batch_sizes:select(0, 0):item(), 1)
  if sorted ~= nil then
    for i, s in ipairs(states) do states[i] = s:index_select(1, sorted) end
  end
  if hx == nil then
    local f = { dtype = data.dtype, device = data.device }
    states[1] = torch.zeros(expected[1], f)
    if self.mode == "LSTM" then states[2] = torch.zeros(expected[2], f) end
  end
  local op = ({ LSTM = torch.lstm, GRU = torch.gru, RNN_TANH = torch.rnn_tanh, RNN_RELU = torch.rnn_relu })[self.mode]
  local results = self:_call(op, data, batch_sizes, self.mode == "LSTM" and states or states[1], self:_flat_weights(),
    self.bias, self.num_layers, self.dropout, self.training, self.bidirectional)
  local finals = {}
  for i = 2, #results do finals[i - 1] = unsorted and results[i]:index_select(1, unsorted) or results[i] end
  return R.PackedSequence(results[1], batch_sizes, sorted, unsorted), finals[1], finals[2]
end

--[[ forward(input, hx, {lengths =}) -> output, h_n [, c_n]. hx: nil (zeros), h0 for GRU/RNN,
     {h0, c0} for LSTM. The options table may also come second: forward(x, {lengths = ...}). ]]
function RNNBase:forward(input, hx, opts)
  if type(hx) == "table" and not torch.is_tensor(hx) and hx[1] == nil and opts == nil then hx, opts = nil, hx end
  if R.is_packed_sequence(input) then return self:_forward_packed(input, hx) end
  opts = opts or {}
  local lstm = self.mode == "LSTM"
  if not torch.is_tensor(input) then self:_fail(1, "expected a Tensor input, got %s", type(input)) end
  local batched = input:dim() == 3
  if input:dim() ~= 2 and input:dim() ~= 3 then
    self:_fail(1, "expected a 3-D (batched) or 2-D (unbatched) input, got %s", shape(input))
  end
  if input:size(-1) ~= self.input_size then
    self:_fail(1, "expected input with last dim %d (input_size), got %s", self.input_size, shape(input))
  end
  local bdim = self.batch_first and 0 or 1
  local states = self:_states(hx, 1)
  if hx ~= nil then
    for i, s in ipairs(states) do
      if s:dim() ~= input:dim() then
        self:_fail(1, "for a %d-D input %s, %s should be %d-D, got %s", input:dim(), shape(input), i == 1 and "h0" or "c0",
          input:dim(), shape(s))
      end
    end
  end
  if not batched then
    if opts.lengths ~= nil then self:_fail(1, "lengths needs a batched (3-D) input, got %s", shape(input)) end
    input = input:unsqueeze(bdim)
    for i, s in ipairs(states) do states[i] = s:unsqueeze(1) end
  end
  local batch = input:size(bdim)
  local expected = self:_check_states(states, batch, 1)
  if hx == nil then
    local f = { dtype = input.dtype, device = input.device }
    states[1] = torch.zeros(expected[1], f)
    if lstm then states[2] = torch.zeros(expected[2], f) end
  end
  local lengths = opts.lengths and self:_lengths(opts.lengths, batch, input:size(1 - bdim))
  local out, finals = self:_run(input, states, lengths)
  if not batched then
    out = out:squeeze(bdim)
    for i, s in ipairs(finals) do finals[i] = s:squeeze(1) end
  end
  return out, finals[1], finals[2]
end

---------------------------------------------------------------- the layers
local LSTM = RNNBase:extend("LSTM")
M.LSTM = LSTM
function LSTM:__init(input_size, hidden_size, opts) RNNBase.__init(self, "LSTM", input_size, hidden_size, opts) end

local GRU = RNNBase:extend("GRU")
M.GRU = GRU
function GRU:__init(input_size, hidden_size, opts) RNNBase.__init(self, "GRU", input_size, hidden_size, opts) end

local RNN = RNNBase:extend("RNN")
M.RNN = RNN
function RNN:__init(input_size, hidden_size, opts)
  local nl = opts and opts.nonlinearity or "tanh"
  if nl ~= "tanh" and nl ~= "relu" then error("RNN: unknown nonlinearity '" .. tostring(nl) .. "'", 3) end
  self.nonlinearity = nl
  RNNBase.__init(self, nl == "tanh" and "RNN_TANH" or "RNN_RELU", input_size, hidden_size, opts)
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
-- (proj_size, keyword-only here, reaches RNNBase for PyTorch's "only supported for LSTM" error.)
A.init(M.RNN, "input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False, "
  .. "dropout=0.0, bidirectional=False, device=None, dtype=None, *, proj_size=0")
A.init(M.GRU, "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, "
  .. "bidirectional=False, device=None, dtype=None, *, proj_size=0")
A.init(M.LSTM, "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, "
  .. "bidirectional=False, proj_size=0, device=None, dtype=None")

return M
