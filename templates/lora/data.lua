--[[
  data.lua — the two texts as byte tensors, random training windows, and a fixed validation set.
  texts(config) -> pretrain, finetune: each {name, path, train (N) int64, val (M) int64}
      a 90/10 split by position. "auto" picks the first text found of
        pretrain: the King James Bible (~/.cache/ltorch/datasets/bible-kjv/kjv.txt, from
                  recipes/fetch_lm_data.sh in the ltorch checkout),
                  then Debian's fortunes "literature", then the GPL-3 text (always installed);
        finetune: Hamlet act I (~/.cache/ltorch/datasets/hamlet), then fortunes "fortunes",
                  then the Apache-2.0 text.
  batch(t, B, T) -> x (B, T), y (B, T) = the bytes that follow each of x's.
  Use your own texts: --pretrain-text FILE --finetune-text FILE (or edit CANDIDATES).
]]
local torch = require "torch"

local M = {}

local CACHE = os.getenv("LTORCH_DATA_CACHE") or ((os.getenv("HOME") or "/tmp") .. "/.cache/ltorch/datasets")
M.CANDIDATES = {
  pretrain = { { "King James Bible", CACHE .. "/bible-kjv/kjv.txt" },
               { "fortunes: literature", "/usr/share/games/fortunes/literature" },
               { "GPL-3", "/usr/share/common-licenses/GPL-3" } },
  finetune = { { "Hamlet act I", CACHE .. "/hamlet/hamlet-act-1.txt" },
               { "fortunes: fortunes", "/usr/share/games/fortunes/fortunes" },
               { "Apache-2.0", "/usr/share/common-licenses/Apache-2.0" } },
}

-- A file's bytes, or a folder's chapter_1.txt, chapter_2.txt, ... joined; nil when missing.
local function read(path)
  local f = io.open(path .. "/chapter_1.txt", "rb")
  if f then
    f:close()
    local parts = {}
    for i = 1, 10000 do
      f = io.open(("%s/chapter_%d.txt"):format(path, i), "rb")
      if not f then break end
      parts[i] = f:read("*a")
      f:close()
    end
    return table.concat(parts, "\n")
  end
  f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return (s and #s > 0) and s or nil
end

local function pick(which, setting)
  if setting ~= "auto" then
    local s = read(setting)
    if not s then error(("%s text not found: %s"):format(which, setting), 0) end
    return setting, setting, s
  end
  for i, c in ipairs(M.CANDIDATES[which]) do
    local s = read(c[2])
    if s then
      if i > 1 then io.stderr:write(("%s text: %s not found, using %s (%s)\n"):format(
        which, M.CANDIDATES[which][1][1], c[1], c[2])) end
      return c[1], c[2], s
    end
  end
  error("no " .. which .. " text found; pass --" .. which .. "-text FILE", 0)
end

local function bytes(s) return torch.from_buffer(s, { dtype = torch.uint8, shape = { #s } }):long() end
M.bytes = bytes

function M.texts(config)
  local out = {}
  for _, which in ipairs({ "pretrain", "finetune" }) do
    local name, path, s = pick(which, config[which .. "_text"])
    local t = bytes(s)
    local n = math.floor(t:size(0) * 0.9)
    out[#out + 1] = { name = name, path = path, train = t:narrow(0, 0, n), val = t:narrow(0, n, t:size(0) - n) }
  end
  return out[1], out[2]
end

function M.batch(t, B, T)
  local starts = torch.randint(t:size(0) - T - 1, { B })
  local idx = starts:unsqueeze(1) + torch.arange(T + 1)                  -- (B, T + 1)
  local w = t:index_select(0, idx:view(-1)):view(B, T + 1)
  return w:narrow(1, 0, T), w:narrow(1, 1, T)
end

-- Consecutive windows from the start of t: a deterministic validation set of <= n_batches.
function M.val_batches(t, B, T, n_batches)
  local out = {}
  local nwin = math.min(n_batches * B, math.floor((t:size(0) - 1) / T))
  for s = 0, nwin - 1, B do
    local b = math.min(B, nwin - s)
    local w = t:narrow(0, s * T, b * T + 1)
    out[#out + 1] = { w:narrow(0, 0, b * T):view(b, T), w:narrow(0, 1, b * T):view(b, T) }
  end
  return out
end

return M
