--[[
  torch.data.datasets.image_folder — ImageFolder: one sub-folder per class of PNG/JPEG files.

  ImageFolder(root, {transform =, target_transform =, channels = 0|1|3|4,
                     extensions = {"png", "jpg", "jpeg"}})
    root/<class>/<file>; classes are the sorted sub-folder names, class_to_idx maps them to
    0-based labels; samples are sorted by class then path.
    ds:get(i) -> {image, label}: image uint8 (H, W, C) decoded by torch.data.image (or
    transform(image)), label 0-based.
  An undecodable file raises "<path>: cannot decode image (<reason>)"; an empty or missing root
  is an error naming it. Built-in transforms are recorded in ds.factory for DataLoader workers.

  Use:
    local ds = data.datasets.ImageFolder("/tmp/imgs", {channels = 1, transform = T.ToTensor()})
]]
local image = require "torch.data.image"
local transforms = require "torch.data.transforms"
local dataset = require "torch.data.dataset"

local ImageFolder = {}
ImageFolder.__index = ImageFolder
ImageFolder.__name = "ImageFolder"

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function list(root, exts)
  local p = io.popen("find -L " .. shell_quote(root) .. " -mindepth 2 -maxdepth 2 -type f 2>/dev/null | LC_ALL=C sort")
  local files = {}
  for line in p:lines() do
    local ext = line:match("%.([%w]+)$")
    if ext and exts[ext:lower()] then files[#files + 1] = line end
  end
  p:close()
  return files
end

function ImageFolder.new(root, opts)
  opts = opts or {}
  root = root:gsub("/+$", "")
  local exts = {}
  for _, e in ipairs(opts.extensions or { "png", "jpg", "jpeg" }) do exts[e] = true end
  local files = list(root, exts)
  if #files == 0 then
    error(("ImageFolder: no images (%s) found in sub-folders of %s")
      :format(table.concat(opts.extensions or { "png", "jpg", "jpeg" }, ", "), root), 2)
  end
  local classes, class_to_idx, samples = {}, {}, {}
  for _, f in ipairs(files) do
    local cls = f:sub(#root + 2):match("^([^/]+)/")
    if class_to_idx[cls] == nil then
      classes[#classes + 1] = cls
      class_to_idx[cls] = #classes - 1
    end
    samples[#samples + 1] = { f, class_to_idx[cls] }
  end
  local tf = type(opts.transform) == "table" and opts.transform[1] and transforms.from_spec(opts.transform) or opts.transform
  local self = dataset.instance(ImageFolder, { root = root, classes = classes, class_to_idx = class_to_idx,
    samples = samples, transform = tf, target_transform = opts.target_transform,
    channels = opts.channels or 0 })
  local ok, spec = pcall(transforms.to_spec, tf)
  if ok and opts.target_transform == nil then
    self.factory = { module = "torch.data.datasets.image_folder",
      args = { root, { transform = spec, channels = opts.channels, extensions = opts.extensions } } }
  end
  return self
end

function ImageFolder:len() return #self.samples end

function ImageFolder:get(i)
  dataset.check_index("ImageFolder", i, #self.samples)
  local s = self.samples[i + 1]
  local ok, x = pcall(image.read, s[1], { channels = self.channels })
  if not ok then error("ImageFolder: " .. tostring(x), 2) end
  local y = s[2]
  if self.transform then x = self.transform(x) end
  if self.target_transform then y = self.target_transform(y) end
  return { x, y }
end

return setmetatable(ImageFolder, { __index = dataset.Dataset,
  __call = function(_, ...) return ImageFolder.new(...) end })
