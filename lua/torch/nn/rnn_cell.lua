--[[
  torch.nn.rnn_cell — one time step of a recurrent layer: nn.RNNCell, nn.LSTMCell, nn.GRUCell
  (and their base nn.RNNCellBase) over ATen's rnn_tanh_cell / rnn_relu_cell / lstm_cell /
  gru_cell, with PyTorch's parameters, init and state_dict keys:
  https://pytorch.org/docs/stable/generated/torch.nn.LSTMCell.html

  Shapes (N batch, Hin input_size, H hidden_size):
    input (N, Hin) or unbatched (Hin); h, c (N, H) or unbatched (H)
  Parameters, in PyTorch's order, all initialised U(-1/sqrt(H), 1/sqrt(H)) in that order:
    weight_ih (G*H, Hin), weight_hh (G*H, H), bias_ih (G*H), bias_hh (G*H); G = 1 (RNNCell),
    4 (LSTMCell, gates i, f, g, o), 3 (GRUCell, gates r, z, n).

  Usage:
    local cell = nn.LSTMCell(10, 20)
    local h, c = cell(x)                 -- hx = nil: zeros
    h, c = cell(x, {h, c})               -- PyTorch's (h, c) pair is the table {h, c}, as for nn.LSTM
    local g = nn.GRUCell(10, 20); local h1 = g(x, h0)
    local r = nn.RNNCell(10, 20, {nonlinearity = "relu"})
]]
local torch = require "torch"
local Module = require("torch.nn.module").Module
local Parameter = require("torch.nn.module").Parameter
local init = require "torch.nn.initializers"
local A = require "torch.nn._fargs"

local M = {}

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

---------------------------------------------------------------- RNNCellBase
local RNNCellBase = Module:extend("RNNCellBase")
M.RNNCellBase = RNNCellBase

-- (the subclasses call base_init: RNNCellBase.__init itself binds PyTorch's signature, below)
local function base_init(self, input_size, hidden_size, bias, num_chunks, opts)
  local name = self._class.__name
  for _, v in ipairs({ input_size, hidden_size, num_chunks }) do
    if type(v) ~= "number" or v ~= math.floor(v) or v < 0 then
      A.fail("%s: expected input_size, hidden_size (and num_chunks) as non-negative integers, got %s, %s",
        name, tostring(input_size), tostring(hidden_size))
    end
  end
  if type(bias) ~= "boolean" then A.fail("%s: bias must be a boolean, got %s", name, type(bias)) end
  self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
  local f = { dtype = opts and opts.dtype, device = opts and opts.device }
  self.weight_ih = Parameter(torch.empty({ num_chunks * hidden_size, input_size }, f))
  self.weight_hh = Parameter(torch.empty({ num_chunks * hidden_size, hidden_size }, f))
  if bias then
    self.bias_ih = Parameter(torch.empty({ num_chunks * hidden_size }, f))
    self.bias_hh = Parameter(torch.empty({ num_chunks * hidden_size }, f))
  else
    self:register_parameter("bias_ih", nil)
    self:register_parameter("bias_hh", nil)
  end
  self:reset_parameters()
end
RNNCellBase.__init = base_init

function RNNCellBase:reset_parameters()
  local stdv = self.hidden_size > 0 and 1 / math.sqrt(self.hidden_size) or 0
  for _, p in ipairs(self:parameters()) do init.uniform_(p, -stdv, stdv) end
end

function RNNCellBase:extra_repr()
  local s = ("%d, %d"):format(self.input_size, self.hidden_size)
  if self.bias ~= true then s = s .. ", bias=False" end
  if self.nonlinearity ~= nil and self.nonlinearity ~= "tanh" then s = s .. ", nonlinearity=" .. self.nonlinearity end
  return s
end

-- Checks input (1-D or 2-D) and returns it batched, with whether it was batched.
function RNNCellBase:_input(input)
  local name = self._class.__name
  if not torch.is_tensor(input) then A.fail("%s: expected a Tensor input, got %s", name, type(input)) end
  if input:dim() ~= 1 and input:dim() ~= 2 then
    A.fail("%s: Expected input to be 1D or 2D, got %dD instead", name, input:dim())
  end
  if input:size(-1) ~= self.input_size then
    A.fail("%s: expected input with last dim %d (input_size), got %s", name, self.input_size, shape(input))
  end
  local batched = input:dim() == 2
  return batched and input or input:unsqueeze(0), batched
end

-- Checks one state tensor (label "hidden", "hx[0]", ...) and returns it batched like the input.
function RNNCellBase:_state(h, label, input, batched)
  local name = self._class.__name
  if not torch.is_tensor(h) then A.fail("%s: expected %s as a Tensor, got %s", name, label, type(h)) end
  if h:dim() ~= 1 and h:dim() ~= 2 then A.fail("%s: Expected %s to be 1D or 2D, got %dD instead", name, label, h:dim()) end
  if not batched then h = h:unsqueeze(0) end
  if h:dim() ~= 2 or h:size(0) ~= input:size(0) or h:size(1) ~= self.hidden_size then
    A.fail("%s: expected %s of shape %s (batch, hidden_size), got %s", name, label,
      "[" .. input:size(0) .. ", " .. self.hidden_size .. "]", shape(batched and h or h:squeeze(0)))
  end
  return h
end

function RNNCellBase:_zeros(input)
  return torch.zeros({ input:size(0), self.hidden_size }, { dtype = input.dtype, device = input.device })
end

function RNNCellBase:forward()
  A.fail("RNNCellBase is an abstract base: use nn.RNNCell, nn.LSTMCell or nn.GRUCell")
end

---------------------------------------------------------------- RNNCell, GRUCell
local RNNCell = RNNCellBase:extend("RNNCell")
M.RNNCell = RNNCell

function RNNCell:__init(input_size, hidden_size, opts)
  opts = opts or {}
  local nl = opts.nonlinearity or "tanh"
  if nl ~= "tanh" and nl ~= "relu" then A.fail("RNNCell: Unknown nonlinearity: %s", tostring(nl)) end
  self.nonlinearity = nl
  local bias = opts.bias
  if bias == nil then bias = true end
  base_init(self, input_size, hidden_size, bias, 1, opts)
end

-- forward(input, hx = nil) -> h'. One step of h' = act(W_ih x + b_ih + W_hh h + b_hh).
function RNNCell:forward(input, hx)
  local x, batched = self:_input(input)
  local h = hx == nil and self:_zeros(x) or self:_state(hx, "hidden", x, batched)
  local op = self.nonlinearity == "tanh" and torch.rnn_tanh_cell or torch.rnn_relu_cell
  local out = A.call(op, x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
  return batched and out or out:squeeze(0)
end

local GRUCell = RNNCellBase:extend("GRUCell")
M.GRUCell = GRUCell

function GRUCell:__init(input_size, hidden_size, opts)
  local bias = opts and opts.bias
  if bias == nil then bias = true end
  base_init(self, input_size, hidden_size, bias, 3, opts)
end

function GRUCell:forward(input, hx)
  local x, batched = self:_input(input)
  local h = hx == nil and self:_zeros(x) or self:_state(hx, "hidden", x, batched)
  local out = A.call(torch.gru_cell, x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
  return batched and out or out:squeeze(0)
end

---------------------------------------------------------------- LSTMCell
local LSTMCell = RNNCellBase:extend("LSTMCell")
M.LSTMCell = LSTMCell

function LSTMCell:__init(input_size, hidden_size, opts)
  local bias = opts and opts.bias
  if bias == nil then bias = true end
  base_init(self, input_size, hidden_size, bias, 4, opts)
end

-- forward(input, hx = nil | {h, c}) -> h', c' (PyTorch's tuple (h_1, c_1) as two results).
function LSTMCell:forward(input, hx)
  local x, batched = self:_input(input)
  local h, c
  if hx == nil then
    h = self:_zeros(x)
    c = h
  else
    if type(hx) ~= "table" or torch.is_tensor(hx) or table.maxn(hx) ~= 2 then
      local got = torch.is_tensor(hx) and "a Tensor" or type(hx) == "table" and ("a table of %d values"):format(table.maxn(hx))
        or type(hx)
      A.fail("LSTMCell: expected hx as a table {h, c} of two Tensors, got %s%s", got, torch.is_tensor(hx)
        and " (LSTMCell returns two values, h and c: write `local h, c = cell(x, hx)` and pass {h, c})" or "")
    end
    h = self:_state(hx[1], "hx[0]", x, batched)
    c = self:_state(hx[2], "hx[1]", x, batched)
  end
  local h1, c1 = A.call(torch.lstm_cell, x, { h, c }, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
  if not batched then return h1:squeeze(0), c1:squeeze(0) end
  return h1, c1
end

-- PyTorch 2.11's constructor signatures: positional, keyword or mixed arguments.
A.init(RNNCellBase, "input_size, hidden_size, bias, num_chunks, device=None, dtype=None")
A.init(RNNCell, "input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None")
A.init(LSTMCell, "input_size, hidden_size, bias=True, device=None, dtype=None")
A.init(GRUCell, "input_size, hidden_size, bias=True, device=None, dtype=None")

return M
