-- spec/support/block_cache.lua — what the specs of the CPU allocator's block caches share
-- (spec/torch/large_blocks_spec.lua, spec/torch/small_blocks_spec.lua).
--
-- Why: both caches are off under LTORCH_MALLOC=glibc and in sanitizer builds, so their specs
-- probe whether this process caches, skip the cache specs when it does not, and check that it
-- does wherever it should (a cache broken into never keeping anything must fail, not skip).
--
-- What:
--   block_cache.rss_kb()  this process's resident set (VmRSS), KiB
--   block_cache.setup(what, field, numel, spec)  inside a describe block: probes the cache (a
--       tensor of `numel` floats freed must leave bytes in torch.memory_stats()[field]), runs
--       torch.collect() around every spec, adds the spec "is on unless LTORCH_MALLOC=glibc or a
--       sanitizer build", and returns it_cached(name, fn): `spec.it` that is pending when the
--       cache is off. `spec` is { it =, pending =, before_each =, after_each =, assert = }
--       (busted's functions live in the spec file's environment, not in this module's).
--
-- Use:
--   local block_cache = require "spec.support.block_cache"
--   describe("small tensor blocks", function()
--     local it_cached = block_cache.setup("the small-block lists", "cached_small_bytes", 4,
--       { it = it, pending = pending, before_each = before_each, after_each = after_each, assert = assert })
--     it_cached("keeps a freed block", function() ... end)
--   end)
local torch = require "torch"

local M = {}

function M.rss_kb()
  local f = assert(io.open("/proc/self/status"))
  local s = f:read("*a")
  f:close()
  return tonumber(s:match("VmRSS:%s+(%d+)"))
end

local function probe(field, numel)
  torch.collect()
  torch.empty(numel):free()
  local on = torch.memory_stats()[field] > 0
  torch.collect()
  return on
end

function M.setup(what, field, numel, spec)
  local on = probe(field, numel)
  spec.before_each(function() torch.collect() end)
  spec.after_each(function() torch.collect() end)
  spec.it("is on unless LTORCH_MALLOC=glibc or a sanitizer build (scripts/sanitize.sh sets LTORCH_SANITIZED)", function()
    spec.assert.are.equal(os.getenv("LTORCH_MALLOC") ~= "glibc" and os.getenv("LTORCH_SANITIZED") == nil, on)
  end)
  return function(name, fn)
    spec.it(name, function()
      if not on then spec.pending(what .. " is off in this process") return end
      fn()
    end)
  end
end

return M
