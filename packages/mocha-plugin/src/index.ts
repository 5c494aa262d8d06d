// placeholder: the plugin is being written
export {};
