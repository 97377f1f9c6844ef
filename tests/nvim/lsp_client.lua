-- Headless Neovim (0.7+) driving `python -m torch2ms lsp` like a user would:
-- open a file, wait for diagnostics, apply the quick-fix of one finding and the
-- "# noqa" action of another, write the file, wait for the re-published
-- diagnostics and dump what Neovim saw to a JSON file.
--
-- Environment: TORCH2MS_PYTHON (interpreter), TORCH2MS_FILE (file to edit),
-- TORCH2MS_OUT (JSON written here), TORCH2MS_DYN_CODE. Exits with :cquit on an unexpected error.

local python = os.getenv('TORCH2MS_PYTHON')
local file = os.getenv('TORCH2MS_FILE')
local out = os.getenv('TORCH2MS_OUT')
local dyn_code = os.getenv('TORCH2MS_DYN_CODE')  -- the dynamic-shape code of torch.nonzero (TMS2xx)
local clamp_code = os.getenv('TORCH2MS_CLAMP_CODE')  -- the code of torch.clamp's finding (TMS101/TMS102)
local report = { steps = {}, errors = {} }

local function note(step)
  table.insert(report.steps, step)
end

local function snapshot(bufnr)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp_diag = (d.user_data or {}).lsp or {}
    table.insert(items, {
      code = d.code or lsp_diag.code,
      source = d.source,
      severity = d.severity,
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      message = d.message,
      href = (lsp_diag.codeDescription or {}).href,
    })
  end
  table.sort(items, function(a, b)
    if a.lnum ~= b.lnum then return a.lnum < b.lnum end
    return tostring(a.code) < tostring(b.code)
  end)
  return items
end

local function finish(code)
  local handle = io.open(out, 'w')
  handle:write(vim.fn.json_encode(report))
  handle:close()
  if code == 0 then vim.cmd('qall!') else vim.cmd('cquit! ' .. code) end
end

local function find_diag(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp_diag = (d.user_data or {}).lsp or {}
    if (d.code or lsp_diag.code) == code then return d, lsp_diag end
  end
end

local function code_actions(bufnr, diag)
  -- Ask for the actions of the diagnostic's whole line (Neovim 0.7 keeps no LSP range
  -- in the diagnostic; the server clamps the end column to the line).
  local line_range = {
    start = { line = diag.lnum, character = 0 },
    ['end'] = { line = diag.lnum, character = 100000 },
  }
  local lsp_diag = {
    range = line_range, message = diag.message, source = diag.source,
    code = diag.code or ((diag.user_data or {}).lsp or {}).code,
  }
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = line_range,
    context = { diagnostics = { lsp_diag } },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, 20000) or {}
  local actions = {}
  for _, response in pairs(responses) do
    for _, action in ipairs(response.result or {}) do table.insert(actions, action) end
  end
  return actions
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = 'torch2ms',
    cmd = { python, '-m', 'torch2ms', 'lsp' },
    root_dir = vim.fn.fnamemodify(file, ':h'),
    init_options = { select = {}, ignore = {}, targetVersion = '2.10', debounce = 50 },
    settings = { torch2ms = { select = {}, ignore = {}, targetVersion = '2.10', debounce = 50 } },
    flags = { debounce_text_changes = 20 },
  })
  assert(client_id, 'vim.lsp.start_client failed')
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)

  assert(vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50), 'no diagnostics arrived')
  report.before = snapshot(bufnr)
  note('diagnostics')

  -- 1. the quick-fix (rewrite to the MindSpore call) of the finding on torch.clamp
  local clamp = find_diag(bufnr, clamp_code)
  local actions = code_actions(bufnr, clamp)
  report.actions = {}
  local fix
  for _, action in ipairs(actions) do
    table.insert(report.actions, action.title)
    if not fix and action.kind == 'quickfix' and not action.title:find('noqa') then fix = action end
  end
  assert(fix and fix.edit, 'no quick-fix offered')
  vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding or 'utf-16')
  note('quickfix applied: ' .. fix.title)

  -- wait for the re-scan of the edited buffer
  assert(vim.wait(30000, function()
    local d = find_diag(bufnr, dyn_code)
    local c = find_diag(bufnr, clamp_code)
    return d ~= nil and (c == nil or c.lnum ~= clamp.lnum)
  end, 50), 'diagnostics not updated after the quick-fix')

  -- 2. suppress the dynamic-shape finding with "# noqa"
  local dynamic = find_diag(bufnr, dyn_code)
  local noqa
  for _, action in ipairs(code_actions(bufnr, dynamic)) do
    if action.title:find('noqa') then noqa = action end
  end
  assert(noqa and noqa.edit, 'no noqa action offered')
  vim.lsp.util.apply_workspace_edit(noqa.edit, client.offset_encoding or 'utf-16')
  note('noqa applied')
  vim.cmd('write')
  note('written')

  assert(vim.wait(30000, function() return find_diag(bufnr, dyn_code) == nil end, 50),
    dyn_code .. ' still reported after the noqa edit')
  report.after = snapshot(bufnr)
  report.offset_encoding = client.offset_encoding
  client.stop()
  vim.wait(5000, function() return client.is_stopped() end, 50)
end)

if not ok then
  table.insert(report.errors, tostring(err))
  finish(3)
else
  finish(0)
end
