"""Export helpers of the LLM flow: graph passes for exported LLMs
(`export_passes`) and Hugging Face causal LMs to .pte (`hf`)."""
