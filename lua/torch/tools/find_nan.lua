--[[
  torch.tools.find_nan — `tool.lua find-nan-batches SETUP.lua`: scans the loaders of a doctor setup
  (lua/torch/doctor/setup.lua: train_loader, val_loader) for NaN/Inf in inputs and targets,
  and reports the first offending batches with the sample indices and counts.
  Options: --max-batches N (default: all), --split train|val|both (default both).
  Exit 0 clean, 1 non-finite values found, 2 usage error or a setup that does not load.
]]
local T = require "torch.tools"

local M = { name = "find-nan-batches", summary = "scan a setup's loaders for non-finite inputs/targets",
  usage = [[usage: ltorch tools/tool.lua find-nan-batches SETUP.lua [--max-batches N] [--split train|val|both]
  SETUP.lua returns a doctor setup (train_loader, val_loader; see torch.doctor.setup)
exit 0 clean, 1 NaN/Inf found, 2 usage / setup error]] }

local function scan_tensor(t)
  if not t:is_floating_point() then return 0, nil end
  local bad = t:isfinite():logical_not()
  local n = bad:sum():item()
  if n == 0 then return 0, nil end
  local rows = bad
  if rows:dim() > 1 then rows = rows:flatten(1):any(1) end
  local idx = rows:nonzero():flatten()
  return n, idx:narrow(0, 0, math.min(5, idx:size(0))):tolist()
end

function M.scan(setup, opts)
  local S = require "torch.doctor.setup"
  opts = opts or {}
  local hits, scanned = {}, 0
  local which = opts.split or "both"
  for _, split in ipairs({ "train", "val" }) do
    local loader = setup[split .. "_loader"]
    if loader and (which == "both" or which == split) then
      local it = S.iterate(loader)
      local bi = 0
      while not opts.max_batches or bi < opts.max_batches do
        local b = it()
        if b == nil then break end
        local x, y = S.split(setup, b)
        for name, t in pairs({ inputs = x, targets = y }) do
          if require("torch").is_tensor(t) then
            local n, rows = scan_tensor(t)
            if n > 0 then hits[#hits + 1] = { split = split, batch = bi, what = name, count = n, rows = rows } end
          end
        end
        bi, scanned = bi + 1, scanned + 1
      end
    end
  end
  table.sort(hits, function(a, b) return a.count > b.count end)
  return hits, scanned
end

function M.main(argv, out)
  local o, pos = T.parse(argv, { max_batches = "number", split = "string" })
  if o.help then out(M.usage); return 0 end
  if #pos ~= 1 then T.usage_error("one setup script expected") end
  if o.split and o.split ~= "train" and o.split ~= "val" and o.split ~= "both" then
    T.usage_error("--split must be train, val or both")
  end
  local S = require "torch.doctor.setup"
  local ok, setup = pcall(S.load, pos[1])
  if not ok then T.usage_error("%s", tostring(setup)) end
  local hits, scanned = M.scan(setup, { max_batches = o.max_batches, split = o.split })
  out(("%d batches scanned, %d with non-finite values"):format(scanned, #hits))
  for i = 1, math.min(5, #hits) do
    local h = hits[i]
    out(("  %s batch %d %s: %d non-finite value(s), samples %s"):format(h.split, h.batch, h.what, h.count,
      table.concat(h.rows, ", ")))
  end
  if #hits > 5 then out(("  ... %d more"):format(#hits - 5)) end
  return #hits > 0 and 1 or 0
end

return M
