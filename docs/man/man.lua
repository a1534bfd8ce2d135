-- pandoc filter for the man pages (scripts/man-page.sh).
-- A link between the docs means nothing in a terminal: a link keeps its text only.
function Link(el)
  return el.content
end

-- A table of long cells is unreadable in 80 columns: each row becomes an item of a definition
-- list, its first cell the term and every other cell a paragraph, named by its column's heading
-- when there are more than two columns.
local function text_of(blocks)
  return pandoc.utils.stringify(blocks)
end

function Table(el)
  local headers = {}
  if el.head and el.head.rows and #el.head.rows > 0 then
    for _, cell in ipairs(el.head.rows[1].cells) do
      table.insert(headers, text_of(cell.contents))
    end
  end
  local items = {}
  for _, body in ipairs(el.bodies) do
    for _, row in ipairs(body.body) do
      local term = {}
      local defs = {}
      for i, cell in ipairs(row.cells) do
        if i == 1 then
          term = pandoc.utils.blocks_to_inlines(cell.contents)
        else
          local inlines = pandoc.utils.blocks_to_inlines(cell.contents)
          if #row.cells > 2 and headers[i] and headers[i] ~= "" then
            table.insert(inlines, 1, pandoc.Space())
            table.insert(inlines, 1, pandoc.Emph({pandoc.Str(headers[i] .. ":")}))
          end
          table.insert(defs, pandoc.Para(inlines))
        end
      end
      table.insert(items, {term, {defs}})
    end
  end
  return pandoc.DefinitionList(items)
end

-- What the docs show for their test and not for a reader of the installed program: `{{word}}` in
-- an example stands for any text there (docs/cli.md, "How the examples are checked"); the man
-- page shows "...".
function CodeBlock(el)
  el.text = el.text:gsub("{{[%w_%-]*}}", "...")
  return el
end

-- A part of a page between <!-- man: skip --> and <!-- man: end --> (or the page's end) is for
-- readers of the source tree (how to build the package, how the examples are tested) and is
-- left out of the man page.
local function marker(block)
  if block.t ~= "RawBlock" or block.format ~= "html" then return nil end
  if block.text:match("^<!%-%-%s*man:%s*skip%s*%-%->%s*$") then return "skip" end
  if block.text:match("^<!%-%-%s*man:%s*end%s*%-%->%s*$") then return "end" end
  return nil
end

function Pandoc(doc)
  local kept = {}
  local skipping = false
  for _, block in ipairs(doc.blocks) do
    local m = marker(block)
    if m == "skip" then
      skipping = true
    elseif m == "end" then
      skipping = false
    elseif not skipping then
      table.insert(kept, block)
    end
  end
  doc.blocks = kept
  return doc
end
