--[[
  spec/data/support/faulty_dataset.lua — a small map-style dataset that misbehaves on purpose,
  built inside DataLoader workers from plain arguments (dataset_factory).

  new(n, {fail_at = i, exit_at = i, sleep_at = i, sleep_s = s}): get(i) returns
  {tensor{i, i}, i}, except: fail_at raises "faulty_dataset: bad sample i"; exit_at ends the
  worker thread at once (pthread_exit, as a crash would); sleep_at busy-waits sleep_s seconds.
  Also: worker_init(id) records the id; collate_pairs is a named collate_fn.
]]
local M = {}
M.__index = M

function M.new(n, opts)
  return setmetatable({ n = n, opts = opts or {} }, M)
end

function M:len() return self.n end

local function explode(i)
  error("faulty_dataset: bad sample " .. i)
end

function M:get(i)
  local torch = require "torch"
  local o = self.opts
  if o.fail_at == i then explode(i) end
  if o.exit_at == i then
    require "torch.data._pool"
    require("ffi").C.ltw_worker_exit_now()
  end
  if o.sleep_at == i then
    local t = os.time() + (o.sleep_s or 1)
    while os.time() < t do end
  end
  local info = require("torch.data").get_worker_info()
  return { torch.tensor({ i, i }), i, info and info.id or -1, require("torch.data").rng():uniform() }
end

function M.collate_pairs(samples)
  local out = {}
  for k, s in ipairs(samples) do out[k] = s[2] end
  return out
end

return M
