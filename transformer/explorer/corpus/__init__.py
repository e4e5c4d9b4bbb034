"""The files a model's corpus views read (head atlas, errors, behaviour report, faithfulness): the dev sets and the
reference corpus they are made from (``data_folder``), how each file is built, written and read (``model_files``), and
the loaded model's, read or computed on first use (``on_demand``).
"""
