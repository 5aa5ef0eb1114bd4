--[[
  torch.data._rng — a small seeded random generator owned by samplers and random_split.

  Why: PyTorch gives each sampler its own torch.Generator so that shuffling does not disturb
  (and is not disturbed by) the global RNG that dropout and augmentation draw from. This is the
  same idea in plain Lua: xoshiro128** on 32-bit bit ops (no allocation), seeded through
  splitmix32. Streams are deterministic for a seed but are NOT PyTorch's Mersenne/Philox
  streams: the same seed gives a different (equally valid) permutation than PyTorch.

  Use:
    local Generator = require "torch.data._rng"
    local g = Generator(42)
    g:random(10)        --> integer in [0, 10)
    g:uniform()         --> float in [0, 1)
    g:randperm(5)       --> Lua array, a permutation of 0..4
    g:seed_value()      --> 42 (the seed it was made with)
]]
local bit = require "bit"
local band, bxor, rol, rshift, tobit = bit.band, bit.bxor, bit.rol, bit.rshift, bit.tobit

local Generator = {}
Generator.__index = Generator

local function u32(x) return x % 4294967296 end

-- splitmix32 step: a well-mixed 32-bit value from a counter
local function mix(z)
  z = tobit(z + 0x9E3779B9)
  local x = z
  x = bxor(x, rshift(x, 16)); x = tobit(u32(x) * 0x85EB % 4294967296 + u32(x) * 0xCA6B0000 % 4294967296)
  x = bxor(x, rshift(x, 13)); x = tobit(u32(x) * 0xAE35 % 4294967296 + u32(x) * 0xC2B20000 % 4294967296)
  x = bxor(x, rshift(x, 16))
  return z, x
end

function Generator.new(seed)
  seed = seed or os.time()
  local self = setmetatable({ _seed = seed }, Generator)
  self:manual_seed(seed)
  return self
end

function Generator:manual_seed(seed)
  self._seed = seed
  local z = tobit(seed % 4294967296)
  local hi = math.floor(seed / 4294967296)
  z = bxor(z, tobit(hi % 4294967296) * 1 + 0x2545F491)
  local s = {}
  for i = 1, 4 do z, s[i] = mix(z) end
  if s[1] == 0 and s[2] == 0 and s[3] == 0 and s[4] == 0 then s[1] = 1 end
  self.s0, self.s1, self.s2, self.s3 = s[1], s[2], s[3], s[4]
  return self
end

function Generator:seed_value() return self._seed end

-- next 32 random bits as a number in [0, 2^32)
function Generator:next_u32()
  local s0, s1, s2, s3 = self.s0, self.s1, self.s2, self.s3
  local r = tobit(rol(tobit(s1 * 5), 7) * 9)
  local t = bit.lshift(s1, 9)
  s2 = bxor(s2, s0); s3 = bxor(s3, s1); s1 = bxor(s1, s2); s0 = bxor(s0, s3)
  s2 = bxor(s2, t); s3 = rol(s3, 11)
  self.s0, self.s1, self.s2, self.s3 = s0, s1, s2, s3
  return u32(r)
end

-- float in [0, 1) with 53 random bits
function Generator:uniform()
  local a = rshift(self:next_u32(), 5)        -- 27 bits
  local b = rshift(self:next_u32(), 6)        -- 26 bits
  return (a * 67108864 + b) / 9007199254740992
end

-- integer in [0, n)
function Generator:random(n)
  return math.floor(self:uniform() * n)
end

-- Fisher-Yates: a permutation of 0..n-1 as a Lua array
function Generator:randperm(n)
  local p = {}
  for i = 1, n do p[i] = i - 1 end
  for i = n, 2, -1 do
    local j = self:random(i) + 1
    p[i], p[j] = p[j], p[i]
  end
  return p
end

-- a fresh 63-bit-safe seed drawn from this generator (for worker base seeds)
function Generator:draw_seed()
  return self:next_u32() * 2048 + band(self:next_u32(), 2047)
end

return setmetatable(Generator, { __call = function(_, seed) return Generator.new(seed) end })
