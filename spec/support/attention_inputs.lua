-- spec/support/attention_inputs.lua — deterministic inputs and masks for the attention and
-- Transformer parity specs (spec/nn/{sdpa,attention,transformer,transformer_decoder}_spec.lua).
--
-- wave(dims, scale): a nested Lua table of the given dims, filled with a fixed sin pattern
--   rounded to 3 decimals (the same numbers on both sides of a parity check, sent as JSON).
-- causal(n): n × n booleans, true above the diagonal (the key may not be attended).
-- float_causal(n): the same as 0 / -inf, what nn.Transformer.generate_square_subsequent_mask(n)
--   returns.
--
-- Use: local inputs = require "spec.support.attention_inputs"
--      local wave, causal = inputs.wave, inputs.causal

local M = {}

function M.wave(dims, scale)
  local function fill(d, seed)
    local t = {}
    for i = 1, dims[d] do
      if d == #dims then t[i] = math.floor(math.sin(seed * 7 + i) * 1000) / 1000 * scale
      else t[i] = fill(d + 1, seed * 5 + i) end
    end
    return t
  end
  return fill(1, 1)
end

function M.causal(n)
  local m = {}
  for i = 1, n do
    m[i] = {}
    for j = 1, n do m[i][j] = j > i end
  end
  return m
end

function M.float_causal(n)
  local m = M.causal(n)
  for i = 1, n do
    for j = 1, n do m[i][j] = m[i][j] and -math.huge or 0 end
  end
  return m
end

return M
