--[[
  torch.data.datasets.fortunes — a language-identification corpus from Debian's fortunes files.

  Fortunes({languages = {"en", "de", "es", "it", "pl", "pt"} (those installed by default),
            root = $LTORCH_FORTUNES_DIR or "/usr/share/games/fortunes", max_per_language = nil,
            min_chars = 1})
    ds:get(i) -> {text (string), label (0-based index into ds.languages)}
    ds.texts, ds.labels (Lua arrays)
  Files: entries separated by a line holding only "%". English: the regular files directly in
  root except `brasil` (Portuguese) and *.dat / *.u8 / symlinks; de/, es/, it/, pl/ are
  sub-folders (packages fortunes-de, fortunes-es, fortunes-it, fortunes-pl). A missing
  language is an error naming its package and `apt-get install`.
  Combine with torch.data.tokenizer to get tensors.

  Use:  local ds = data.datasets.Fortunes({languages = {"en", "de"}, max_per_language = 2000})
]]
local dataset = require "torch.data.dataset"

local M = {}
M.__index = M
M.__name = "Fortunes"

M.PACKAGES = { en = "fortunes", de = "fortunes-de", es = "fortunes-es", it = "fortunes-it",
  pl = "fortunes-pl", pt = "fortunes-br" }

local function files(root, lang)
  local cmd
  if lang == "en" then
    cmd = ("find '%s' -maxdepth 1 -type f ! -name '*.dat' ! -name '*.u8' ! -name brasil 2>/dev/null | LC_ALL=C sort"):format(root)
  elseif lang == "pt" then
    cmd = ("find '%s' -maxdepth 1 -type f -name brasil 2>/dev/null"):format(root)
  else
    cmd = ("find '%s/%s' -maxdepth 1 -type f ! -name '*.dat' ! -name '*.u8' 2>/dev/null | LC_ALL=C sort"):format(root, lang)
  end
  local p = io.popen(cmd)
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

local function entries(path, out, limit, min_chars)
  local f = assert(io.open(path, "rb"))
  local buf = {}
  local function flush()
    local t = table.concat(buf, "\n"):gsub("^%s+", ""):gsub("%s+$", "")
    if #t >= min_chars and (not limit or #out < limit) then out[#out + 1] = t end
    buf = {}
  end
  for line in f:lines() do
    if line == "%" then flush() else buf[#buf + 1] = line end
  end
  flush()
  f:close()
end

function M.new(opts)
  opts = opts or {}
  local env = os.getenv("LTORCH_FORTUNES_DIR")
  local root = opts.root or (env and env ~= "" and env) or "/usr/share/games/fortunes"
  local langs = opts.languages or { "en", "de", "es", "it" }
  local self = dataset.instance(M, { languages = langs, texts = {}, labels = {} })
  for k, lang in ipairs(langs) do
    local fs = files(root, lang)
    if #fs == 0 then
      local pkg = M.PACKAGES[lang] or "?"
      error(("Fortunes: no '%s' fortune files under %s; install the Debian package %s "
        .. "(apt-get install %s, or bash scripts/fetch_datasets.sh)"):format(lang, root, pkg, pkg), 2)
    end
    local got = {}
    for _, path in ipairs(fs) do entries(path, got, opts.max_per_language, opts.min_chars or 1) end
    for _, t in ipairs(got) do
      self.texts[#self.texts + 1] = t
      self.labels[#self.labels + 1] = k - 1
    end
  end
  self.factory = { module = "torch.data.datasets.fortunes", args = { opts } }
  return self
end

function M:len() return #self.texts end
function M:get(i)
  dataset.check_index("Fortunes", i, #self.texts)
  return { self.texts[i + 1], self.labels[i + 1] }
end

return setmetatable(M, { __index = dataset.Dataset, __call = function(_, ...) return M.new(...) end })
