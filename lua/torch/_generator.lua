--[[
  torch._generator — torch.Generator (CPU): a random generator object of its own, as PyTorch's
  torch.Generator(), and the draws the data samplers make with one (lua/torch/data/sampler.lua,
  lua/torch/data/dataloader.lua), so that their orders are PyTorch's for the same seeds.

  Why: PyTorch's samplers and DataLoader draw a seed from torch's global generator, seed a fresh
  torch.Generator with it and shuffle with torch.randperm(n, generator=g); reproducing their
  order and the global generator's state afterwards needs the same libtorch generator and ops
  (bindings/lt_cpu_generator.cpp), not a generator of ltorch's own.

  What:
    torch.Generator([device = "cpu"])     a new CPU generator (PyTorch's default seed 67280421310721)
    g:manual_seed(seed) -> g               seed: a non-negative integer, or an int64/uint64 cdata
    g:initial_seed() -> number
    g:get_state() / g:set_state(t)         1-D uint8 tensors, as torch.get_rng_state()
  For the samplers (g = nil means torch's global generator, as generator=None):
    M.check(g, who) -> g                   a Generator or nil, else an error at the caller's caller
    M.random_seed(g) -> int64 cdata        torch.empty((), dtype=torch.int64).random_(generator=g).item()
    M.randperm(g, n), M.randint(g, high, size), M.multinomial(g, weights, n, replacement) -> Lua arrays

  Usage:
    local g = torch.Generator():manual_seed(42)
    local s = torch.utils.data.RandomSampler(ds, {generator = g})
]]
local ffi = require "ffi"
local _C = require "torch._C"
local memory = require "torch._memory"

local C, check = _C.C, _C.check

local M = {}

local Generator = { __name = "torch.Generator" }
Generator.__index = Generator
M.Generator_class = Generator

local gen_out = ffi.new("lt_cpu_generator*[1]")
local tensor_out = _C.TensorOut()
local seed_out = ffi.new("uint64_t[1]")
local int_out = ffi.new("int64_t[1]")

local function is_generator(v) return getmetatable(v) == Generator end
M.is_generator = is_generator

function M.Generator(device)
  if device ~= nil and device ~= "cpu" and not (type(device) == "table" and device.type == "cpu") then
    error("torch.Generator: only the CPU generator is available here (torch.Generator() or torch.Generator(\"cpu\")), "
      .. "got device " .. tostring(device), 2)
  end
  check(C.lt_cpu_generator_new(gen_out), "Generator")
  return setmetatable({ _h = ffi.gc(gen_out[0], C.lt_cpu_generator_free), device = "cpu" }, Generator)
end

local function seed_value(seed)
  if type(seed) == "cdata" and (ffi.istype("int64_t", seed) or ffi.istype("uint64_t", seed)) then return seed end
  if type(seed) ~= "number" or seed % 1 ~= 0 or seed < -2 ^ 63 or seed >= 2 ^ 64 then
    error("manual_seed: expected an integer seed, got " .. tostring(seed), 3)
  end
  if seed < 0 then return ffi.cast("uint64_t", ffi.new("int64_t", seed)) end   -- PyTorch wraps negatives
  return ffi.new("uint64_t", seed)
end

function Generator:manual_seed(seed)
  check(C.lt_cpu_generator_manual_seed(self._h, seed_value(seed)), "manual_seed")
  return self
end

function Generator:initial_seed()
  check(C.lt_cpu_generator_initial_seed(self._h, seed_out), "initial_seed")
  return tonumber(seed_out[0])
end

function Generator:get_state()
  check(C.lt_cpu_generator_get_state(tensor_out, self._h), "get_state")
  return memory.wrap(tensor_out[0])
end

function Generator:set_state(state)
  if type(state) ~= "cdata" or state.h == nil then
    error("bad argument #1 to 'set_state' (Tensor expected, got " .. type(state) .. ")", 2)
  end
  check(C.lt_cpu_generator_set_state(self._h, state.h), "set_state")
  return self
end

Generator.__tostring = function() return "<torch.Generator object>" end

-- The generator a sampler was given: nil (torch's global one) or a torch.Generator.
function M.check(g, who)
  if g == nil or is_generator(g) then return g end
  error(("%s: generator must be a torch.Generator (torch.Generator():manual_seed(n)), a seed number or nil, got %s")
    :format(who, type(g) == "table" and g.randperm and "a torch.utils.data.Generator (its stream is not PyTorch's)"
      or type(g)), 3)
end

local function handle(g) return g and g._h or nil end

local function tolist(t)
  local n, out = t:numel(), {}
  if n == 0 then return out end
  local p = ffi.cast("int64_t*", t:data_ptr())
  for i = 1, n do out[i] = tonumber(p[i - 1]) end
  return out
end

function M.random_seed(g)
  check(C.lt_cpu_generator_random_int64(handle(g), int_out), "random_")
  return int_out[0]
end

function M.randperm(g, n)
  check(C.lt_cpu_generator_randperm(tensor_out, handle(g), n), "randperm")
  return tolist(memory.wrap(tensor_out[0]))
end

function M.randint(g, high, size)
  check(C.lt_cpu_generator_randint(tensor_out, handle(g), high, size), "randint")
  return tolist(memory.wrap(tensor_out[0]))
end

function M.multinomial(g, weights, n, replacement)
  check(C.lt_cpu_generator_multinomial(tensor_out, handle(g), weights.h, n, replacement and 1 or 0), "multinomial")
  return tolist(memory.wrap(tensor_out[0]))
end

return M
