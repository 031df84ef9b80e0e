"""Pure rules: ids, lineage proof, the transcript window, row projection, delegations, documents."""
