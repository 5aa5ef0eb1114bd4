--[[
  torch.nn.utils_rnn — torch.nn.utils.rnn: variable-length batches for the recurrent layers,
  with PyTorch's functions and PackedSequence (https://pytorch.org/docs/stable/nn.html#utilities):

    PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)   fields of the same names;
        :to(...), :cpu(), :cuda(), :double(), :float(), :half(), :long(), :int(), :short(),
        :char(), :byte(), :is_pinned(), .is_cuda — as PyTorch's (batch_sizes stays on the CPU)
    pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True) -> PackedSequence
    pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None)
        -> padded, lengths            (PyTorch's tuple as two results)
    pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side='right') -> Tensor
    pack_sequence(sequences, enforce_sorted=True) -> PackedSequence
    unpack_sequence(packed_sequences) -> a Lua array of Tensors
    unpad_sequence(padded_sequences, lengths, batch_first=False) -> a Lua array of Tensors
    invert_permutation(permutation) -> Tensor (nil for nil)

  Shapes (T longest length, B batch, * any trailing dims): a padded batch is (T, B, *), or
  (B, T, *) with batch_first; a PackedSequence's data is (sum of lengths, *), time step by time
  step, batch_sizes[t] (int64, CPU) the number of sequences still running at step t. With
  enforce_sorted = false the batch is sorted by decreasing length first: sorted_indices is that
  order, unsorted_indices its inverse (nn.LSTM/GRU/RNN use them to order h_0 and h_n).

  Usage:
    local R = torch.nn.utils.rnn
    local packed = R.pack_padded_sequence(x, {5, 2, 3}, {batch_first = true, enforce_sorted = false})
    local out, h_n = gru(packed)                 -- out is a PackedSequence
    local padded, lengths = R.pad_packed_sequence(out, {batch_first = true})
  Arguments bind as PyTorch's (positional, keyword or mixed); unpad_sequence does not transpose
  the caller's tensor in place (PyTorch's does, as a side effect).
]]
local torch = require "torch"
local A = require "torch.nn._fargs"

local M = {}
local def = A.definer(M)

local function typename(v) return torch.is_tensor(v) and "Tensor" or type(v) end

---------------------------------------------------------------- invert_permutation
local function invert(p)
  if p == nil then return nil end
  return torch.empty_like(p):scatter_(0, p, torch.arange(0, p:numel(), { device = p.device }))
end

def("invert_permutation", "permutation", function(_, sig, a)
  if a.permutation == nil then return nil end
  return invert(A.tensor(sig, a, "permutation"))
end)

---------------------------------------------------------------- PackedSequence
local PackedSequence = { __name = "PackedSequence" }
M.PackedSequence = PackedSequence
local methods = {}

PackedSequence.__index = function(self, k)
  if k == "is_cuda" then return rawget(self, "data").is_cuda end
  return methods[k]
end

local function new_packed(data, batch_sizes, sorted_indices, unsorted_indices)
  if unsorted_indices == nil then unsorted_indices = invert(sorted_indices) end
  return setmetatable({ data = data, batch_sizes = batch_sizes, sorted_indices = sorted_indices,
    unsorted_indices = unsorted_indices }, PackedSequence)
end

local PS_SIG = A.signature("PackedSequence", "data, batch_sizes=None, sorted_indices=None, unsorted_indices=None")
PackedSequence.__signature = PS_SIG
setmetatable(PackedSequence, {
  __tostring = function() return "<class PackedSequence>" end,
  __call = function(_, ...)
    local a = A.bind(PS_SIG, ...)
    local data = a.data
    if a.batch_sizes == nil and type(data) == "table" and not torch.is_tensor(data) then
      data, a.batch_sizes = data[1], data[2]   -- PackedSequence({data, batch_sizes}), as PackedSequence(*pair)
    end
    for _, k in ipairs({ "batch_sizes", "sorted_indices", "unsorted_indices" }) do
      if a[k] ~= nil and not torch.is_tensor(a[k]) then
        A.fail("PackedSequence: %s must be a Tensor or nil, got %s", k, typename(a[k]))
      end
    end
    if not torch.is_tensor(data) then A.fail("PackedSequence: data must be a Tensor, got %s", typename(data)) end
    if a.batch_sizes == nil then A.fail("PackedSequence: missing batch_sizes") end
    if a.batch_sizes.device.type ~= "cpu" then
      A.fail("PackedSequence: batch_sizes should always be on CPU. Instances of PackedSequence should never be "
        .. "created manually. They should be instantiated by functions like pack_sequence and pack_padded_sequences "
        .. "in nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
    end
    return new_packed(data, a.batch_sizes, a.sorted_indices, a.unsorted_indices)
  end,
})

function M.is_packed_sequence(v) return getmetatable(v) == PackedSequence end

PackedSequence.__tostring = function(self)
  local function s(t) return t == nil and "None" or tostring(t) end
  return ("PackedSequence(data=%s, batch_sizes=%s, sorted_indices=%s, unsorted_indices=%s)"):format(s(self.data),
    s(self.batch_sizes), s(self.sorted_indices), s(self.unsorted_indices))
end

-- to(...) takes Tensor.to's arguments: data moves / casts; the indices follow data's device.
function methods:to(...)
  local data = self.data:to(...)
  if data.dtype == self.data.dtype and data.device == self.data.device then return self end
  local function move(t) return t and t:to(data.device) end
  return new_packed(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))
end
function methods:cpu() return self:to("cpu") end
function methods:cuda(index) return self:to(index and ("cuda:" .. index) or "cuda") end
for name, dt in pairs({ double = "float64", float = "float32", half = "float16", long = "int64", int = "int32",
  short = "int16", char = "int8", byte = "uint8" }) do
  methods[name] = function(self) return self:to(torch[dt]) end
end
function methods:is_pinned() return self.data:is_pinned() end

---------------------------------------------------------------- pack / pad
-- lengths (Lua array or Tensor) -> an int64 tensor (a Lua array lands on the CPU, as PyTorch's).
local function lengths_tensor(who, lengths)
  if torch.is_tensor(lengths) then return lengths:to(torch.int64) end
  if type(lengths) ~= "table" then A.fail("%s: lengths must be a Lua array of integers or a Tensor, got %s", who,
    typename(lengths)) end
  return torch.tensor(lengths, { dtype = torch.int64 })
end

local function pack_padded(who, input, lengths, batch_first, enforce_sorted)
  lengths = lengths_tensor(who, lengths)
  local sorted
  if not enforce_sorted then
    lengths, sorted = torch.sort(lengths, { descending = true })
    sorted = sorted:to(input.device)
    input = input:index_select(batch_first and 0 or 1, sorted)
  end
  local data, batch_sizes = A.call(torch._pack_padded_sequence, input, lengths, batch_first)
  return new_packed(data, batch_sizes, sorted, nil)
end

def("pack_padded_sequence", "input, lengths, batch_first=False, enforce_sorted=True", function(name, sig, a)
  return pack_padded(name, A.tensor(sig, a, "input"), a.lengths, A.boolean(sig, a, "batch_first"),
    A.boolean(sig, a, "enforce_sorted"))
end)

local function check_packed(sig, v)
  if getmetatable(v) ~= PackedSequence then
    A.fail("bad argument #1 to '%s' (PackedSequence expected, got %s)", sig.name, typename(v))
  end
  return v
end

local function pad_packed(seq, batch_first, padding_value, total_length)
  local max_len = seq.batch_sizes:size(0)
  if total_length ~= nil then
    if total_length < max_len then
      A.fail("pad_packed_sequence: Expected total_length to be at least the length of the longest sequence in "
        .. "input, but got total_length=%d and max sequence length being %d", total_length, max_len)
    end
    max_len = total_length
  end
  local padded, lengths = A.call(torch._pad_packed_sequence, seq.data, seq.batch_sizes, batch_first, padding_value,
    max_len)
  local unsorted = seq.unsorted_indices
  if unsorted ~= nil then
    return padded:index_select(batch_first and 0 or 1, unsorted), lengths:index_select(0, unsorted:cpu())
  end
  return padded, lengths
end

def("pad_packed_sequence", "sequence, batch_first=False, padding_value=0.0, total_length=None", function(_, sig, a)
  local seq = check_packed(sig, a.sequence)
  if a.total_length ~= nil then A.int(sig, a, "total_length") end
  return pad_packed(seq, A.boolean(sig, a, "batch_first"), A.number(sig, a, "padding_value"), a.total_length)
end)

-- sequences: a Lua array of Tensors, or a Tensor (its slices along dim 0, as Python iterates one).
local function tensor_list(sig, seqs)
  if torch.is_tensor(seqs) then return seqs:unbind(0) end
  if type(seqs) ~= "table" then
    A.fail("%s: Expected iterable for input sequences, but got arg of type: %s", sig.name, typename(seqs))
  end
  for i, s in ipairs(seqs) do
    if not torch.is_tensor(s) then A.fail("%s: sequences[%d] must be a Tensor, got %s", sig.name, i, typename(s)) end
  end
  return seqs
end

local function pad(list, batch_first, padding_value, side)
  return A.call(torch.pad_sequence, list, batch_first, padding_value, side)
end

def("pad_sequence", "sequences, batch_first=False, padding_value=0.0, padding_side='right'", function(_, sig, a)
  local side = a.padding_side
  if side ~= "right" and side ~= "left" then
    A.fail("pad_sequence: Expected padding_side to be one of left or right, but got %s.", tostring(side))
  end
  return pad(tensor_list(sig, a.sequences), A.boolean(sig, a, "batch_first"), A.number(sig, a, "padding_value"), side)
end)

def("pack_sequence", "sequences, enforce_sorted=True", function(name, sig, a)
  local list = tensor_list(sig, a.sequences)
  local lengths = {}
  for i, s in ipairs(list) do lengths[i] = s:size(0) end
  return pack_padded(name, pad(list, false, 0, "right"), lengths, false, A.boolean(sig, a, "enforce_sorted"))
end)

-- The first lengths[i] steps of each padded sequence (batch_first: (B, T, *); else (T, B, *)).
local function unpad(who, padded, lengths, batch_first)
  if not batch_first then padded = padded:transpose(0, 1) end
  if torch.is_tensor(lengths) then lengths = lengths:tolist()
  elseif type(lengths) ~= "table" then A.fail("%s: lengths must be a Tensor or a Lua array, got %s", who, typename(lengths)) end
  if #lengths ~= padded:size(0) then
    A.fail("%s: got %d lengths for a batch of %d sequences", who, #lengths, padded:size(0))
  end
  local out = {}
  for i, n in ipairs(lengths) do out[i] = padded:select(0, i - 1):narrow(0, 0, n) end
  return out
end

def("unpad_sequence", "padded_sequences, lengths, batch_first=False", function(name, sig, a)
  return unpad(name, A.tensor(sig, a, "padded_sequences"), a.lengths, A.boolean(sig, a, "batch_first"))
end)

def("unpack_sequence", "packed_sequences", function(name, sig, a)
  local padded, lengths = pad_packed(check_packed(sig, a.packed_sequences), true, 0, nil)
  return unpad(name, padded, lengths, true)
end)

return M
